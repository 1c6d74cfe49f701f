/**
 * The scale-out harness's own view of the database, beside the instances:
 * the pending send jobs, the messages' recorded wamids, the send and cron
 * jobs at the end of a phase. Reads go over sqld's HTTP API (Hrana over HTTP, one request per statement,
 * with a deadline, so a wedged sqld cannot hang the harness) or straight
 * from the embedded SQLite file (read-only), and sqld's write probe.
 */
import { DatabaseSync } from "node:sqlite";

export type Row = Record<string, unknown>;

export interface HarnessDb {
  /** Runs one statement; rejects after `timeoutMs`. */
  query(sql: string, args?: unknown[], timeoutMs?: number): Promise<Row[]>;
}

interface HranaValue {
  type: string;
  value?: unknown;
}

function hranaArg(value: unknown): HranaValue {
  if (value === null || value === undefined) return { type: "null" };
  if (typeof value === "number") {
    return Number.isInteger(value)
      ? { type: "integer", value: String(value) }
      : { type: "float", value };
  }
  return { type: "text", value: String(value) };
}

function fromHrana(value: HranaValue): unknown {
  if (value.type === "null") return null;
  if (value.type === "integer") return Number(value.value);
  return value.value;
}

/** A statement against sqld at `url` (http://host:port). */
export function sqldDb(url: string): HarnessDb {
  return {
    async query(sql, args = [], timeoutMs = 10_000) {
      const res = await fetch(`${url}/v2/pipeline`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          requests: [
            { type: "execute", stmt: { sql, args: args.map(hranaArg) } },
            { type: "close" },
          ],
        }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const body = await res.json();
      const result = body?.results?.[0];
      if (!res.ok || result?.type !== "ok") {
        throw new Error(
          `sqld refused "${sql.slice(0, 60)}": ${
            JSON.stringify(result?.error ?? body).slice(0, 300)
          }`,
        );
      }
      const { cols, rows } = result.response.result as {
        cols: { name: string }[];
        rows: HranaValue[][];
      };
      return rows.map((row) =>
        Object.fromEntries(cols.map((c, i) => [c.name, fromHrana(row[i]!)]))
      );
    },
  };
}

/** Reads of the embedded database file (opened read-only for each statement). */
export function fileDb(path: string): HarnessDb {
  return {
    query(sql, args = []) {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        db.exec("pragma busy_timeout = 5000");
        const rows = db.prepare(sql).all(
          ...(args as (string | number | null)[]),
        );
        return Promise.resolve(rows as Row[]);
      } catch (err) {
        return Promise.reject(err);
      } finally {
        db.close();
      }
    },
  };
}

/** The harness's probe table: a write the instances never make, to time sqld's write path. */
export async function prepareProbe(db: HarnessDb): Promise<void> {
  await db.query(
    "create table if not exists harness_probe (id integer primary key, at real not null)",
  );
}

/** One probe write's latency in ms, or Infinity when it failed or took longer than `timeoutMs`. */
export async function probeWrite(
  db: HarnessDb,
  timeoutMs: number,
): Promise<{ ms: number; error?: string }> {
  const t0 = performance.now();
  try {
    await db.query("insert into harness_probe (at) values (?)", [
      Date.now() / 1000,
    ], timeoutMs);
    return { ms: performance.now() - t0 };
  } catch (err) {
    return { ms: Infinity, error: String((err as Error)?.message ?? err) };
  }
}

/**
 * Send jobs still waiting or running (a rescued job, a retry: whatever may
 * still reach the upstream), or undefined when the jobs cannot be read.
 */
export async function pendingSendJobs(
  db: HarnessDb,
): Promise<number | undefined> {
  try {
    const [row] = await db.query(
      "select count(*) as n from jobs where kind = 'message.send' and state not in ('completed', 'discarded')",
      [],
      5_000,
    );
    return Number(row?.n);
  } catch {
    return undefined;
  }
}

export interface EndView {
  /** Each outbound message's recorded wamid. */
  recordedWamid?: Map<string, string | null>;
  /** Outbound messages still queued. */
  stillQueued?: Set<string>;
  /** Every send job: unique_key, locked_by, state, finalized_at. */
  sendJobs?: Row[];
  /** Outbound messages by status ("sent": 1200, ...). */
  statuses?: Record<string, number>;
  /** Every cron job: unique_key, state, attempt. */
  cronRows?: { unique_key: string; state: string; attempt: number }[];
  /** What could not be read, and why. */
  notes: string[];
}

/** The database's view at the end of a phase; each part that cannot be read is left out, with a note. */
export async function readEnd(
  db: HarnessDb,
  opts: { sendJobs: boolean },
): Promise<EndView> {
  const view: EndView = { notes: [] };
  const read = async <T>(what: string, sql: string): Promise<T | undefined> => {
    try {
      return await db.query(sql, [], 20_000) as T;
    } catch (err) {
      view.notes.push(
        `cannot read ${what}: ${
          String((err as Error)?.message ?? err).slice(0, 200)
        }`,
      );
      return undefined;
    }
  };
  const messages = await read<
    { id: string; wa_message_id: string | null; status: string }[]
  >(
    "the messages",
    "select id, wa_message_id, status from messages where direction = 'outbound'",
  );
  if (messages) {
    view.recordedWamid = new Map(messages.map((r) => [r.id, r.wa_message_id]));
    view.stillQueued = new Set(
      messages.filter((r) => r.status === "queued").map((r) => r.id),
    );
    view.statuses = {};
    for (const r of messages) {
      view.statuses[r.status] = (view.statuses[r.status] ?? 0) + 1;
    }
  }
  if (opts.sendJobs) {
    view.sendJobs = await read<Row[]>(
      "the send jobs",
      "select unique_key, locked_by, state, finalized_at from jobs where kind = 'message.send'",
    );
  }
  view.cronRows = await read(
    "the cron jobs",
    "select unique_key, state, attempt from jobs where unique_key like 'cron:%'",
  );
  return view;
}

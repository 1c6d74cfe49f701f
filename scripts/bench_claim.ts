// deno-lint-ignore-file no-console
/**
 * The worker pools' claim statements on a job table shaped like the
 * pipeline's, in one process:
 * `deno run -A scripts/bench_claim.ts [--channels 10] [--per-channel 5000]
 *   [--due-seconds 30] [--hooks 300] [--finished 30000] [--runs 200]`.
 *
 * The table (real migrations, a temp SQLite file): per channel, a campaign
 * of batch sends paced 12.5 ms apart (80 msg/s) whose first `due-seconds`
 * are due (the pool drains slower than the pacing), `hooks` due webhook
 * deliveries for each of two subscriptions, and finished jobs. For each
 * claim the pools make (the main pool with its reserved slots, and with only
 * those free; the capped webhook pool) it prints every statement the claim
 * issues with its query plan, the rows of the claim index's due ranges it
 * lists (what the planner may read) and its median time over `runs`, each
 * run claimed in a transaction and rolled back so every run sees the same
 * table. Times are wall times of one statement in this process: compare two
 * checkouts by alternating runs of this script, not with other figures.
 */
import { Kysely } from "kysely";
import { openDatabase } from "../src/db/database.ts";
import { migrateToLatest } from "../src/db/migrator.ts";
import { openSqliteFile } from "../src/db/sqlite_dialect.ts";
import type { Database } from "../src/db/schema.ts";
import { toDbTime } from "../src/db/time.ts";
import {
  type AnyJobInput,
  claim,
  type ClaimOptions,
  enqueueManyUnchecked,
  PRIORITY,
  WEBHOOK_LANES,
} from "../src/jobs/queue.ts";
import { JOB_KINDS } from "../src/jobs/kinds.ts";
import { planProbe } from "../tests/_support/plans.ts";
import { numberFlags } from "./_bench.ts";

const flags = numberFlags({
  channels: 10,
  "per-channel": 5000,
  "due-seconds": 30,
  hooks: 300,
  finished: 30000,
  runs: 200,
});
const PACE_MS = 1000 / 80;
const GROUPS = ["01a00000-wh-1", "01a00000-wh-2"];
const now = new Date("2026-11-23T10:00:00.000Z");

function at(ms: number): Date {
  return new Date(now.getTime() + ms);
}

async function fill(db: Kysely<Database>): Promise<void> {
  const jobs: AnyJobInput[] = [];
  for (let c = 0; c < flags.channels; c++) {
    for (let i = 0; i < flags["per-channel"]; i++) {
      jobs.push({
        kind: "message.send",
        payload: { messageId: `m-${c}-${i}` },
        priority: PRIORITY.batch,
        runAt: at(i * PACE_MS - flags["due-seconds"] * 1000),
      });
    }
  }
  for (const groupKey of GROUPS) {
    for (let i = 0; i < flags.hooks; i++) {
      jobs.push({
        kind: "webhook.deliver",
        payload: { deliveryId: `${groupKey}-${i}` },
        priority: PRIORITY.webhook,
        groupKey,
        runAt: at(i - 1000),
      });
    }
  }
  for (let i = 0; i < flags.finished; i++) {
    jobs.push({
      kind: "webhook.deliver",
      payload: { deliveryId: `done-${i}` },
      priority: PRIORITY.webhook,
      groupKey: GROUPS[i % 2],
      runAt: at(-60_000),
    });
  }
  for (let i = 0; i < jobs.length; i += 1000) {
    await db.transaction().execute((trx) =>
      enqueueManyUnchecked(trx, jobs.slice(i, i + 1000), at(-60_000))
    );
  }
  await db.updateTable("jobs")
    .set({ state: "completed", finalized_at: toDbTime(at(-30_000)) })
    .where("payload", "like", '{"deliveryId":"done-%').execute();
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

class Rollback<T> extends Error {
  constructor(readonly value: T) {
    super("rolled back");
  }
}

/** What `run` returns, its writes rolled back (on the probe's connection). */
async function rolledBack<T>(
  run: (trx: Kysely<Database>) => Promise<T>,
): Promise<T> {
  try {
    await probe.db.transaction().execute(async (trx) => {
      throw new Rollback(await run(trx));
    });
  } catch (err) {
    if (err instanceof Rollback) return err.value as T;
    throw err;
  }
  throw new Error("unreachable");
}

const dir = await Deno.makeTempDir({ prefix: "bench-claim-" });
const path = `${dir}/app.db`;
const { db } = openDatabase(`file:${path}`);
await migrateToLatest(db);
await fill(db);
await db.destroy();

const mainLanes = Object.values(PRIORITY).filter((p) =>
  !WEBHOOK_LANES.includes(p as 8 | 10)
);
const mainKinds = Object.keys(JOB_KINDS).filter((k) => k !== "webhook.deliver");
const urgent = { maxPriority: PRIORITY.inbound };
const claims: Record<string, ClaimOptions> = {
  // WORKERS=16 with 5 reserved slots, 5 running: 10 open and 5 reserved free.
  "main pool, 15 free of which 5 reserved": {
    workerId: "w",
    limit: 15,
    leaseMs: 30_000,
    now,
    lanes: mainLanes,
    kinds: mainKinds,
    reserve: { slots: 5, maxPriority: urgent.maxPriority },
  },
  "main pool, only reserved slots free": {
    workerId: "w",
    limit: 3,
    leaseMs: 30_000,
    now,
    lanes: mainLanes,
    kinds: mainKinds,
    ...urgent,
  },
  "webhook pool, cap 16, one group half full": {
    workerId: "w",
    limit: 56,
    leaseMs: 15_000,
    now,
    lanes: WEBHOOK_LANES,
    kinds: ["webhook.deliver"],
    groups: { cap: 16, running: new Map([[GROUPS[0]!, 8]]) },
  },
};

await using probe = planProbe(path);
const raw = openSqliteFile(path);
const due = (lanes: string) =>
  raw.prepare(
    `select count(*) as n from jobs where state in ('available', 'retryable')
      and run_at <= ? and priority in (${lanes})`,
  ).get(toDbTime(now))!.n;
console.log(
  `jobs: ${flags.channels} x ${flags["per-channel"]} paced batch sends (${
    flags["due-seconds"]
  } s of them due), ${flags.hooks} due deliveries x ${GROUPS.length} subscriptions, ${flags.finished} finished; ${flags.runs} runs per statement`,
);
for (const [name, opts] of Object.entries(claims)) {
  const issued = await rolledBack((trx) =>
    probe.statementsOf(() => claim(trx, opts))
  );
  console.log(`\n${name}: ${issued.length} statements`);
  for (const s of issued) {
    const stmt = raw.prepare(s.sql);
    const params = s.parameters as (string | number | null)[];
    const times: number[] = [];
    for (let i = 0; i < flags.runs; i++) {
      raw.exec("begin immediate");
      const t0 = performance.now();
      stmt.all(...params);
      times.push(performance.now() - t0);
      raw.exec("rollback");
    }
    const ranges = [...s.sql.matchAll(/priority in \(([^)]*)\)/g)]
      .map((m) => `(${m[1]}): ${due(m[1]!)}`);
    console.log(
      `  ${(median(times) * 1000).toFixed(1).padStart(8)} us  ${
        s.sql.replace(/\s+/g, " ").slice(0, 110)
      }...`,
    );
    console.log(`      due rows in the lanes listed ${ranges.join(", ")}`);
    console.log(`      plan: ${s.plan.replaceAll("\n", " | ")}`);
  }
}
raw.close();
await Deno.remove(dir, { recursive: true });

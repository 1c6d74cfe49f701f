/** What happens to a claimed job once its handler returned or threw. */
import { AppError, coerceError } from "../errors.ts";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { Db, Executor } from "../db/schema.ts";
import { addMs } from "../db/time.ts";
import type { QueryResult } from "kysely";
import {
  completeMany,
  failMany,
  type Failure,
  type JobRow,
  type Release,
  releaseMany,
} from "./queue.ts";
import type { FailOutcome } from "./types.ts";

/**
 * Thrown by a handler to run the job again after `delayMs` without counting
 * an attempt; with `hold`, the job is held on that key (see HoldJob in
 * errors.ts): wakeHeld() of the key runs it at once.
 */
export class Snooze extends Error {
  override readonly name = "Snooze";
  constructor(
    readonly delayMs: number,
    reason?: string,
    readonly hold?: string,
  ) {
    super(reason ?? `Snoozed for ${delayMs} ms`);
  }
}

export type Outcome =
  | { type: "complete" }
  | { type: "snooze"; delayMs: number; hold?: string }
  | { type: "fail"; error: string; retryable: boolean; retryAfterMs?: number };

const SETTLE_TRIES = 4;
const SETTLE_BACKOFF_MS = 100;

function finite(ms: number | undefined): number | undefined {
  return ms !== undefined && Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

function describe(err: unknown): string {
  try {
    const e = coerceError(err);
    return `${e.name}: ${e.message}`;
  } catch {
    return "Error: the handler threw a value that cannot be described";
  }
}

/**
 * Maps what a handler threw to an outcome: Snooze re-runs later, an AppError keeps its
 * `retryable` and `retryAfterMs`, anything else is treated as retryable.
 */
export function classify(err: unknown): Outcome {
  try {
    if (err instanceof Snooze) {
      const delayMs = finite(err.delayMs) ?? 0;
      return err.hold === undefined
        ? { type: "snooze", delayMs }
        : { type: "snooze", delayMs, hold: err.hold };
    }
    if (err instanceof AppError) {
      const out: Outcome = {
        type: "fail",
        error: `${err.code}: ${err.message}`,
        retryable: err.retryable,
      };
      const after = finite(err.retryAfterMs);
      return after === undefined ? out : { ...out, retryAfterMs: after };
    }
  } catch { /* a hostile thrown value: treat it as an unknown error */ }
  return { type: "fail", error: describe(err), retryable: true };
}

/**
 * What runs an atomic write as recorded statements (GroupCommit.runPlanned,
 * named by its shape: the jobs layer imports no src/db module): the
 * statements run on `writes.db` are kept, then committed as one write
 * batch, and `finish` reads their answers by handle (src/db/planned_writes.ts).
 */
export interface PlanRunner {
  runPlanned<T>(
    plan: (
      db: Executor,
      writes: { readonly db: Executor; readonly last: number },
    ) => Promise<(answers: Answers) => T>,
  ): Promise<T>;
}

/** The committed statements' answers, by the handle recording gave them. */
interface Answers {
  of(handle: number): QueryResult<unknown>;
}

export interface SettleDeps {
  db: Db;
  clock: Clock;
  /**
   * libSQL: the settle statements of several kinds go in one write batch
   * through it, not in an interactive transaction (issue 30). Without it
   * (embedded SQLite) they share one transaction.
   */
  plans?: PlanRunner | undefined;
}

interface Pending {
  job: JobRow;
  outcome: Outcome;
  log: Logger;
  settled: () => void;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Settles the outcomes of jobs that finish close together in one write: the
 * outcomes that arrive in one turn of the event loop (and while the previous
 * write runs) are written together, one statement per kind (completeMany,
 * failMany, releaseMany) in one transaction. A job's settle() resolves only
 * once its outcome is committed (or given up), so nothing that waits on a job
 * sees it before it is durable.
 */
export class Settler {
  #deps: SettleDeps;
  #queue: Pending[] = [];
  #flushing = false;

  constructor(deps: SettleDeps) {
    this.#deps = deps;
  }

  /**
   * Writes the outcome with completeMany(), failMany() or releaseMany(), trying again on
   * database errors. If the database stays down it gives up and logs: the lease then
   * expires and rescueExpiredLeases() hands the job back, so nothing is lost.
   */
  settle(job: JobRow, outcome: Outcome, log: Logger): Promise<void> {
    return new Promise((settled) => {
      this.#queue.push({ job, outcome, log, settled });
      if (this.#flushing) return;
      this.#flushing = true;
      // After the microtasks of this turn: the jobs finishing with this one join it.
      setImmediate(() => this.#flush());
    });
  }

  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0);
        await this.#write(batch);
        for (const p of batch) p.settled();
      }
    } finally {
      this.#flushing = false;
    }
  }

  async #write(batch: Pending[]): Promise<void> {
    for (let attempt = 1;; attempt++) {
      try {
        await this.#apply(batch);
        return;
      } catch (err) {
        // The first job's log line stands for the batch.
        const log = batch[0]!.log;
        const fields = batch.length === 1
          ? { err }
          : { err, jobs: batch.length };
        if (attempt >= SETTLE_TRIES) {
          log.error(
            "Cannot settle job; it runs again once its lease expires",
            fields,
          );
          return;
        }
        log.warn("Cannot settle job; trying again", fields);
        await delay(SETTLE_BACKOFF_MS * 2 ** attempt);
      }
    }
  }

  async #apply(batch: Pending[]): Promise<void> {
    const now = this.#deps.clock.now();
    const done: Pending[] = [];
    const failed: Pending[] = [];
    const snoozed: Pending[] = [];
    for (const p of batch) {
      const type = p.outcome.type;
      (type === "complete" ? done : type === "fail" ? failed : snoozed).push(p);
    }
    const settling: Settling = {
      done: done.map((p) => p.job),
      failed: failed.map(failureOf(now)),
      snoozed: snoozed.map((p) => {
        const o = p.outcome as Extract<Outcome, { type: "snooze" }>;
        return {
          job: p.job,
          runAt: addMs(now, o.delayMs),
          ...(o.hold === undefined ? {} : { hold: o.hold }),
        };
      }),
      now,
    };
    // One statement needs no transaction; several share one commit (and a retry starts clean).
    const kinds = [done, failed, snoozed].filter((l) => l.length > 0).length;
    const plans = this.#deps.plans;
    const { completed, states } = kinds <= 1
      ? await settleIn(this.#deps.db, settling)
      : plans
      ? await plans.runPlanned((_db, writes) => recorded(writes, settling))
      : await this.#deps.db.transaction().execute((trx) =>
        settleIn(trx, settling)
      );
    for (const p of done) {
      if (!completed.has(p.job.id)) {
        p.log.warn("Job finished after its lease was lost");
      }
    }
    for (const p of failed) {
      const fields = {
        error: (p.outcome as { error: string }).error,
        state: states.get(p.job.id),
      };
      if (fields.state === "discarded") {
        p.log.error("Job failed for good", fields);
      } else p.log.warn("Job failed", fields);
    }
    for (const p of snoozed) {
      p.log.debug("Job snoozed", {
        delayMs: (p.outcome as { delayMs: number }).delayMs,
      });
    }
  }
}

/** The outcomes of one flush, by kind. */
interface Settling {
  done: JobRow[];
  failed: Failure[];
  snoozed: Release[];
  now: Date;
}

interface Settled {
  completed: Set<string>;
  states: Map<string, FailOutcome>;
}

/** Writes the outcomes on `db`: one statement per kind (and per SETTLE_CHUNK jobs). */
async function settleIn(db: Executor, s: Settling): Promise<Settled> {
  const completed = await completeMany(db, s.done, s.now);
  const states = await failMany(db, s.failed, s.now);
  await releaseMany(db, s.snoozed, s.now);
  return { completed, states };
}

/**
 * settleIn() recorded on `writes` (PlanRunner), its result made from the
 * statements' answers once they are committed (the recording answered
 * nothing). Each kind records its hinted statement and, since it found no
 * row, its follow-up by id: in the batch that one settles only the jobs the
 * hinted one missed (a settled job has no lease left to match).
 */
async function recorded(
  writes: { readonly db: Executor; readonly last: number },
  s: Settling,
): Promise<(answers: Answers) => Settled> {
  const complete = writes.last + 1;
  await completeMany(writes.db, s.done, s.now);
  const fail = writes.last + 1;
  const lost = await failMany(writes.db, s.failed, s.now);
  const release = writes.last + 1;
  await releaseMany(writes.db, s.snoozed, s.now);
  return (answers) => {
    const rows = (from: number, to: number) =>
      Array.from(
        { length: to - from },
        (_, i) =>
          answers.of(from + i).rows as { id: string; state?: FailOutcome }[],
      ).flat();
    const states = new Map(lost);
    for (const r of rows(fail, release)) states.set(r.id, r.state!);
    return {
      completed: new Set(rows(complete, fail).map((r) => r.id)),
      states,
    };
  };
}

function failureOf(now: Date) {
  return (p: Pending): Failure => {
    const o = p.outcome as Extract<Outcome, { type: "fail" }>;
    return {
      job: p.job,
      error: o.error,
      retryable: o.retryable,
      ...(o.retryAfterMs === undefined
        ? {}
        : { retryAt: addMs(now, o.retryAfterMs) }),
    };
  };
}

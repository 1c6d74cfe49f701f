/** Settling claimed jobs under their lease tokens: complete, fail, release (one statement for many), and the heartbeat. */
import { CompiledQuery } from "kysely";
import type { Executor } from "../db/schema.ts";
import { addMs, toDbTime } from "../db/time.ts";
import { backoffMs } from "./retry_policy.ts";
import { LAST_ATTEMPT_SQL } from "./attempts.ts";
import type { ClaimedJob, FailOutcome, JobLease } from "./types.ts";

/** Longest error text kept per attempt. */
const MAX_ERROR_CHARS = 2_000;

/** An error text cut to MAX_ERROR_CHARS. */
export function clip(error: string): string {
  return error.length > MAX_ERROR_CHARS
    ? `${error.slice(0, MAX_ERROR_CHARS)}…`
    : error;
}

/**
 * Settling is batched: completing, failing or releasing any number of jobs is
 * one statement of each kind (per SETTLE_CHUNK jobs). Each job still proves
 * its lease: the update joins the job table on (id, lease_token) from a list
 * of the jobs, so a job whose lease was lost (expired and rescued, or
 * released) is left as it is and missing from the answer while the others
 * settle. The list is a VALUES list of bound values, and the SQL is written
 * once per job count, not compiled per call, since the worker pool runs it
 * for every job. A JSON list unpacked with `->>` cost more (16 claimed jobs
 * a statement on a SQLite file, alternated in one process, microseconds a
 * job: complete 10.5 against 9.5, fail 19.6 against 16.3, release 14.5
 * against 11.6; no difference at one job a statement).
 *
 * A claimed job carries its rowid (JobRow.rowid): the row is found by it
 * directly, the id and token still checked on the row, instead of by a
 * search of the id index (raw node:sqlite, claim + complete of 16 jobs a
 * statement: about a quarter less CPU per job). A lease without one is
 * found by its id; a rowid that no longer holds the job (a VACUUM may
 * renumber rows) is tried again by id (see settleRows).
 */
const SETTLE_WHERE =
  `where jobs.rowid = coalesce(s.rid, (select j.rowid from jobs j where j.id = s.id))
      and jobs.id = s.id and jobs.lease_token = s.token and jobs.state = 'running'`;

/** A settle statement over a list of jobs: its text and the list's bound values. */
type SettleSql = (list: unknown[][]) => { text: string; values: unknown[] };

/** Jobs a settle statement takes: at most 6 x 100 bound values, far below SQLite's limit. */
const SETTLE_CHUNK = 100;

/**
 * A settle statement: `update jobs set ${set}` over the list of jobs, a
 * job's `columns` (id, token, ..., rid last) bound after the parameters of
 * `set` (a `?` without a number takes the one after the largest before it),
 * then `returning ${returning}`. The text for n jobs is written once per n.
 */
function settleStatement(
  columns: readonly string[],
  set: string,
  returning: string,
  where = SETTLE_WHERE,
): SettleSql {
  const row = `(${columns.map(() => "?").join(", ")})`;
  const aliases = columns.map((c, i) => `column${i + 1} as ${c}`).join(", ");
  const texts: string[] = [];
  return (list) => ({
    text: texts[list.length] ??= `update jobs
    set ${set}
    from (select ${aliases} from (values ${
      Array(list.length).fill(row).join(", ")
    })) as s
    ${where}
    returning ${returning}`,
    values: list.flat(),
  });
}

const COMPLETE = settleStatement(
  ["id", "token", "rid"],
  `state = 'completed', finalized_at = ?1, locked_until = null,
        lease_token = null, updated_at = ?1`,
  "jobs.id",
);

/**
 * COMPLETE for a write batch (src/db/atomic.ts), where no second statement
 * can follow up a missed rowid hint: the hint is checked in the statement
 * (one more probe of the same row) and a miss found by id there.
 */
const COMPLETE_IN_BATCH = settleStatement(
  ["id", "token", "rid"],
  `state = 'completed', finalized_at = ?1, locked_until = null,
        lease_token = null, updated_at = ?1`,
  "jobs.id",
  `where jobs.rowid = coalesce(
        (select j.rowid from jobs j where j.rowid = s.rid and j.id = s.id),
        (select j.rowid from jobs j where j.id = s.id))
      and jobs.id = s.id and jobs.lease_token = s.token and jobs.state = 'running'`,
);

// A failure is final when it is permanent or the attempt was the last (LAST_ATTEMPT).
const FINAL = `(s.permanent = 1 or ${LAST_ATTEMPT_SQL})`;
const FAIL = settleStatement(
  ["id", "token", "error", "permanent", "retry_at", "rid"],
  `state = case when ${FINAL} then 'discarded' else 'retryable' end,
        run_at = case when ${FINAL} then jobs.run_at else s.retry_at end,
        finalized_at = case when ${FINAL} then ?1 else null end,
        errors = json_insert(jobs.errors, '$[#]',
          json_object('at', ?1, 'attempt', jobs.attempt, 'error', s.error)),
        locked_until = null,
        lease_token = null,
        updated_at = ?1`,
  "jobs.id, jobs.state",
);

// A held release (s.hold, see HoldJob) records what the job waits on and
// keeps the time it was first held; any other release clears the key (the
// job no longer waits on it) but keeps that time, so a bound on the wait
// counts every hold of the job.
const RELEASE = settleStatement(
  ["id", "token", "run_at", "note", "hold", "rid"],
  `state = 'available',
        attempt = max(jobs.attempt - 1, 0),
        run_at = s.run_at,
        hold_key = s.hold,
        held_since = case when s.hold is null then jobs.held_since
          else coalesce(jobs.held_since, ?1) end,
        errors = case when s.note is null then jobs.errors
          else json_insert(jobs.errors, '$[#]',
            json_object('at', ?1, 'attempt', jobs.attempt, 'error', s.note)) end,
        locked_until = null,
        lease_token = null,
        updated_at = ?1`,
  "jobs.id",
);

/**
 * Runs a settle statement (`sql`, after its fixed `params`) over `items`,
 * SETTLE_CHUNK at a time (`entry` gives one's values, its rowid hint
 * appended). Items whose hint missed are tried once more by id: one that
 * settles then was moved, not lost.
 */
async function settleRows<T, R extends { id: string }>(
  db: Executor,
  sql: SettleSql,
  params: unknown[],
  items: readonly T[],
  entry: (item: T) => [JobLease, ...unknown[]],
): Promise<R[]> {
  const run = async (list: unknown[][]) => {
    const rows: R[] = [];
    for (let i = 0; i < list.length; i += SETTLE_CHUNK) {
      const { text, values } = sql(list.slice(i, i + SETTLE_CHUNK));
      const query = CompiledQuery.raw(text, [...params, ...values]);
      rows.push(...(await db.executeQuery<R>(query)).rows);
    }
    return rows;
  };
  const entries = items.map(entry);
  const rows = await run(entries.map(([j, ...v]) => [...v, j.rowid ?? null]));
  if (rows.length === entries.length) return rows;
  const found = new Set(rows.map((r) => r.id));
  const missed = entries.filter(([j]) =>
    j.rowid !== undefined && !found.has(j.id)
  );
  if (missed.length === 0) return rows;
  return rows.concat(await run(missed.map(([, ...v]) => [...v, null])));
}

/** Marks jobs completed in one statement; returns the ids completed (a job without its lease is left out). */
export async function completeMany(
  db: Executor,
  jobs: readonly JobLease[],
  now: Date,
): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const rows = await settleRows<JobLease, { id: string }>(
    db,
    COMPLETE,
    [toDbTime(now)],
    jobs,
    (j) => [j, j.id, j.leaseToken],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * completeMany() as statements to run later (a write batch, src/db/atomic.ts):
 * each answers the ids it completed (a job without its lease is left out).
 */
export function completeManyQueries(
  jobs: readonly JobLease[],
  now: Date,
): CompiledQuery[] {
  const out: CompiledQuery[] = [];
  for (let i = 0; i < jobs.length; i += SETTLE_CHUNK) {
    const { text, values } = COMPLETE_IN_BATCH(
      jobs.slice(i, i + SETTLE_CHUNK).map((j) => [
        j.id,
        j.leaseToken,
        j.rowid ?? null,
      ]),
    );
    out.push(CompiledQuery.raw(text, [toDbTime(now), ...values]));
  }
  return out;
}

/** Marks a job completed; false when the lease was lost (expired and rescued, or released). */
export async function complete(
  db: Executor,
  job: JobLease,
  now: Date,
): Promise<boolean> {
  return (await completeMany(db, [job], now)).has(job.id);
}

export interface FailOptions {
  error: string;
  /** False for permanent errors: the job is discarded at once. */
  retryable: boolean;
  /** When to retry; defaults to now + backoffMs(attempt). */
  retryAt?: Date;
  now: Date;
}

/** One job's failed attempt, for failMany(). */
export interface Failure {
  job: ClaimedJob;
  error: string;
  retryable: boolean;
  /** @default now + backoffMs(attempt) */
  retryAt?: Date;
}

/**
 * Records failed attempts in one statement: each job retryable until its last
 * attempt, then discarded (at once for a permanent error), its error
 * appended. Returns each job's new state by id; a job without its lease is "lost".
 */
export async function failMany(
  db: Executor,
  failures: readonly Failure[],
  now: Date,
): Promise<Map<string, FailOutcome>> {
  const out = new Map<string, FailOutcome>(
    failures.map((f) => [f.job.id, "lost"]),
  );
  if (failures.length === 0) return out;
  const rows = await settleRows<Failure, { id: string; state: FailOutcome }>(
    db,
    FAIL,
    [toDbTime(now)],
    failures,
    (f) => [
      f.job,
      f.job.id,
      f.job.leaseToken,
      clip(f.error),
      f.retryable ? 0 : 1,
      toDbTime(f.retryAt ?? addMs(now, backoffMs(f.job.attempt))),
    ],
  );
  for (const r of rows) out.set(r.id, r.state);
  return out;
}

/** Records a failed attempt: retryable until `max_attempts`, then discarded; "lost" without the lease. */
export async function fail(
  db: Executor,
  job: ClaimedJob,
  opts: FailOptions,
): Promise<FailOutcome> {
  const failure: Failure = {
    job,
    error: opts.error,
    retryable: opts.retryable,
    ...(opts.retryAt ? { retryAt: opts.retryAt } : {}),
  };
  return (await failMany(db, [failure], opts.now)).get(job.id)!;
}

export interface ReleaseOptions {
  runAt: Date;
  now: Date;
  /** Appended to `errors` (e.g. "Released at shutdown") so the history shows the lost run. */
  note?: string;
}

/** One job given back, for releaseMany(). */
export interface Release {
  job: JobLease;
  runAt: Date;
  note?: string;
  /** Held on this key (HoldJob): wakeHeld(key) runs it at once. */
  hold?: string;
}

/** Gives jobs back without counting the attempt, in one statement; returns the ids released. */
export async function releaseMany(
  db: Executor,
  releases: readonly Release[],
  now: Date,
): Promise<Set<string>> {
  if (releases.length === 0) return new Set();
  const rows = await settleRows<Release, { id: string }>(
    db,
    RELEASE,
    [toDbTime(now)],
    releases,
    (r) => [
      r.job,
      r.job.id,
      r.job.leaseToken,
      toDbTime(r.runAt),
      r.note === undefined ? null : clip(r.note),
      r.hold ?? null,
    ],
  );
  return new Set(rows.map((r) => r.id));
}

/**
 * Runs the jobs held on `key` now (the condition they wait on cleared: a
 * paused template approved again), in the caller's transaction; returns how
 * many. A job held on the key that is running now is not touched: it
 * looks at the condition itself.
 */
export async function wakeHeld(
  db: Executor,
  key: string,
  now: Date,
): Promise<number> {
  const at = toDbTime(now);
  const { rows } = await db.executeQuery<{ id: string }>(CompiledQuery.raw(
    `update jobs set run_at = ?, updated_at = ?
    where hold_key = ? and state in ('available', 'retryable') and run_at > ?
    returning id`,
    [at, at, key, at],
  ));
  return rows.length;
}

/** Gives a job back without counting the attempt (snooze, shutdown); false without the lease. */
export async function release(
  db: Executor,
  job: JobLease,
  opts: ReleaseOptions,
): Promise<boolean> {
  const one: Release = {
    job,
    runAt: opts.runAt,
    ...(opts.note === undefined ? {} : { note: opts.note }),
  };
  return (await releaseMany(db, [one], opts.now)).has(job.id);
}

/**
 * The heartbeat's list stays one JSON list: it runs once a lease interval,
 * not once a job, and its one text serves any number of running jobs.
 */
const EXTEND: SettleSql = (list) => ({
  text: `update jobs set locked_until = ?1, updated_at = ?2
    from (select value ->> 0 as id, value ->> 1 as token, value ->> 2 as rid
      from json_each(?3)) as s
    ${SETTLE_WHERE}
    returning jobs.id`,
  values: [JSON.stringify(list)],
});

/**
 * Pushes running jobs' leases to `until` in one statement (the pool's
 * heartbeat); returns the ids extended (a job whose lease was lost is left out).
 */
export async function extendLeases(
  db: Executor,
  jobs: readonly JobLease[],
  opts: { until: Date; now: Date },
): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const rows = await settleRows<JobLease, { id: string }>(
    db,
    EXTEND,
    [toDbTime(opts.until), toDbTime(opts.now)],
    jobs,
    (j) => [j, j.id, j.leaseToken],
  );
  return new Set(rows.map((r) => r.id));
}

/** Pushes a running job's lease to `until`; false when the lease was lost. */
export async function extendLease(
  db: Executor,
  job: JobLease,
  opts: { until: Date; now: Date },
): Promise<boolean> {
  return (await extendLeases(db, [job], opts)).has(job.id);
}

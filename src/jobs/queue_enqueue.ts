/** Enqueueing: job rows written in the caller's transaction (re-exported from queue.ts). */
import { insertRows, insertRowsWhere } from "../db/bulk.ts";
import type { Executor, JobsTable } from "../db/schema.ts";
import { toJson } from "../db/json.ts";
import { toDbTime } from "../db/time.ts";
import { newId } from "../ids.ts";
import {
  DEFAULT_MAX_ATTEMPTS,
  isJobKind,
  JOB_KINDS,
  type KindSpec,
} from "./kinds.ts";
import type { AnyJobInput, EnqueueInput } from "./types.ts";
import { executeRaw } from "../db/raw.ts";

/** Rows per multi-row insert (18 parameters each stays far below SQLite's limit). */
const INSERT_CHUNK = 100;

/** `at` is now's text, given by callers of many rows: toDbTime() keeps one answer, and now and run_at alternating would miss it on every row. */
function toRow(
  job: AnyJobInput,
  now: Date,
  at: string = toDbTime(now),
): JobsTable {
  return {
    id: newId(now.getTime()),
    kind: job.kind,
    priority: job.priority,
    payload: toJson(job.payload),
    state: "available",
    attempt: 0,
    max_attempts: job.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    run_at: toDbTime(job.runAt ?? now),
    locked_by: null,
    locked_until: null,
    lease_token: null,
    unique_key: job.uniqueKey ?? null,
    errors: "[]",
    created_at: at,
    updated_at: at,
    finalized_at: null,
    group_key: job.groupKey ?? null,
  };
}

/** A typed job with its kind's defaults filled in (JOB_KINDS). */
function withDefaults(job: EnqueueInput): AnyJobInput {
  // Typed callers cannot get here with another kind; a cast or a stored kind can.
  if (!isJobKind(job.kind)) {
    throw new Error(`Cannot enqueue job: unknown kind "${job.kind}"`);
  }
  const spec = JOB_KINDS[job.kind] as KindSpec<never>;
  const uniqueKey = job.uniqueKey ??
    spec.uniqueKey?.(job.payload as never);
  return {
    ...job,
    priority: job.priority ?? spec.lane,
    maxAttempts: job.maxAttempts ?? spec.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    ...(uniqueKey === undefined ? {} : { uniqueKey }),
  };
}

/** Inserts a job in the caller's executor; returns its id, or null when its unique key already exists. */
export async function enqueue(
  db: Executor,
  job: EnqueueInput,
  now: Date,
): Promise<string | null> {
  return await enqueueUnchecked(db, withDefaults(job), now);
}

/** Inserts many jobs, one statement per 100; jobs whose unique key exists are skipped. */
export async function enqueueMany(
  db: Executor,
  jobs: readonly EnqueueInput[],
  now: Date,
): Promise<void> {
  await enqueueManyUnchecked(db, jobs.map(withDefaults), now);
}

/**
 * enqueueMany() with statements written once per row count and shape instead
 * of built per call (the send paths: one job a POST /messages, up to 100 a
 * batch, where building the insert cost about as much as running it), by
 * insertRows() (db/bulk.ts): what every job of the call shares (kind, lane,
 * times, the constant columns: 12 of 17 in a batch's send jobs) is bound
 * once. Unlike enqueueMany(), the JobInsertHook does not see these inserts
 * (the caller wakes the pools after its commit) unless `wake` is set: then
 * it fires for their lanes as for enqueueMany() (the fan-out of every event).
 */
export async function enqueueManyCompiled(
  db: Executor,
  jobs: readonly EnqueueInput[],
  now: Date,
  options: { wake?: boolean } = {},
): Promise<void> {
  const at = toDbTime(now);
  const rows = jobs.map((j) => toRow(withDefaults(j), now, at));
  await insertRows(db, "jobs", rows, {
    onConflictDoNothing: true,
    ...(options.wake ? { announce: new Set(rows.map((r) => r.priority)) } : {}),
  });
}

/**
 * enqueueManyCompiled() of jobs each inserted only where `condition` (SQL
 * naming the entry's `key` as `v.k`) holds when the statement runs: in a
 * write batch, a job that must follow a row written earlier in the batch
 * (insertRowsWhere). Announced to the JobInsertHook like `wake`.
 */
export async function enqueueManyWhere(
  db: Executor,
  entries: ReadonlyArray<{ key: unknown; job: EnqueueInput }>,
  condition: string,
  now: Date,
): Promise<void> {
  const at = toDbTime(now);
  const rows = entries.map((e) => ({
    key: e.key,
    row: toRow(withDefaults(e.job), now, at),
  }));
  await insertRowsWhere(db, "jobs", rows, condition, {
    onConflictDoNothing: true,
    announce: new Set(rows.map((r) => r.row.priority)),
  });
}

/** Every column of a job row, in toRow's order. */
const JOB_COLUMNS = Object.keys(
  toRow({ kind: "", priority: 0, payload: null }, new Date(0)),
) as (keyof JobsTable)[];
/** The insert of one job row, written once. */
const ONE_JOB_INSERT = `insert into jobs (${JOB_COLUMNS.join(", ")}) values (${
  JOB_COLUMNS.map(() => "?").join(", ")
}) on conflict do nothing`;

/**
 * enqueueManyCompiled() of one job (every POST /messages), straight on
 * SQLite (db/raw.ts): not announced, the caller wakes the pools after its
 * commit.
 */
export async function enqueueCompiled(
  db: Executor,
  job: EnqueueInput,
  now: Date,
): Promise<void> {
  const row = toRow(withDefaults(job), now);
  await executeRaw(db, ONE_JOB_INSERT, JOB_COLUMNS.map((c) => row[c]));
}

/**
 * enqueue() for any kind string, outside JOB_KINDS: the queue's own tests and
 * benchmarks, whose pools are given their handlers directly.
 */
export async function enqueueUnchecked(
  db: Executor,
  job: AnyJobInput,
  now: Date,
): Promise<string | null> {
  const row = await db.insertInto("jobs").values(toRow(job, now))
    .onConflict((oc) => oc.doNothing())
    .returning("id")
    .executeTakeFirst();
  return row?.id ?? null;
}

/** enqueueMany() for any kind string (see enqueueUnchecked). */
export async function enqueueManyUnchecked(
  db: Executor,
  jobs: readonly AnyJobInput[],
  now: Date,
): Promise<void> {
  const at = toDbTime(now);
  for (let i = 0; i < jobs.length; i += INSERT_CHUNK) {
    const rows = jobs.slice(i, i + INSERT_CHUNK).map((j) => toRow(j, now, at));
    await db.insertInto("jobs").values(rows)
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

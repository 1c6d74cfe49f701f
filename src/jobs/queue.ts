/** The durable job table: enqueue in the caller's transaction, claim with one statement, settle under a lease token. */
import { sql } from "kysely";
import type { Db, Executor, JobsTable } from "../db/schema.ts";
import { fromJson, toJson } from "../db/json.ts";
import { addMs, toDbTime } from "../db/time.ts";
import { newId } from "../ids.ts";
import { backoffMs } from "./retry_policy.ts";
import { claimPlan } from "./groups.ts";
import type {
  ClaimedJob,
  EnqueueInput,
  FailOutcome,
  JobError,
  JobLease,
  JobRow,
} from "./types.ts";

export type {
  ClaimedJob,
  EnqueueInput,
  FailOutcome,
  JobError,
  JobLease,
  JobRow,
  JobState,
} from "./types.ts";

/** Lanes: lower runs first, so a live send is claimed before any queued batch work. */
export const PRIORITY = {
  live: 0,
  inbound: 5,
  /** Tests and replays a user asked for, ahead of the event deliveries queued before them. */
  webhookManual: 8,
  webhook: 10,
  media: 20,
  batch: 30,
  maintenance: 40,
} as const;

export const DEFAULT_MAX_ATTEMPTS = 25;

/** Rows per multi-row insert (18 parameters each stays far below SQLite's limit). */
const INSERT_CHUNK = 100;

/** Longest error text kept per attempt. */
const MAX_ERROR_CHARS = 2_000;

function toRow(job: EnqueueInput, now: Date): JobsTable {
  const at = toDbTime(now);
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

function toJobRow(r: JobsTable): JobRow {
  return {
    id: r.id,
    kind: r.kind,
    priority: r.priority,
    payload: fromJson<unknown>(r.payload, null),
    attempt: r.attempt,
    maxAttempts: r.max_attempts,
    runAt: r.run_at,
    leaseToken: r.lease_token ?? "",
    uniqueKey: r.unique_key,
    groupKey: r.group_key,
    errors: fromJson<JobError[]>(r.errors, []),
  };
}

function clip(error: string): string {
  return error.length > MAX_ERROR_CHARS
    ? `${error.slice(0, MAX_ERROR_CHARS)}…`
    : error;
}

/** Inserts a job in the caller's executor; returns its id, or null when `uniqueKey` already exists. */
export async function enqueue(
  db: Executor,
  job: EnqueueInput,
  now: Date,
): Promise<string | null> {
  const row = await db.insertInto("jobs").values(toRow(job, now))
    .onConflict((oc) => oc.doNothing())
    .returning("id")
    .executeTakeFirst();
  return row?.id ?? null;
}

/** Inserts many jobs, one statement per 100; jobs whose `uniqueKey` exists are skipped. */
export async function enqueueMany(
  db: Executor,
  jobs: EnqueueInput[],
  now: Date,
): Promise<void> {
  for (let i = 0; i < jobs.length; i += INSERT_CHUNK) {
    const rows = jobs.slice(i, i + INSERT_CHUNK).map((j) => toRow(j, now));
    await db.insertInto("jobs").values(rows)
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

export interface ClaimOptions {
  workerId: string;
  limit: number;
  leaseMs: number;
  now: Date;
  /** Only these kinds. */
  kinds?: string[];
  /** Only jobs with priority <= this (the reserved slot of the worker pool). */
  maxPriority?: number;
  /**
   * Only these priorities (the lanes a pool serves). Listed, they let the
   * claim read jobs_claim_idx as one range per lane instead of scanning past
   * the other pool's backlog.
   */
  lanes?: readonly number[];
  /**
   * Caps jobs in flight per group: a group with `cap` running is skipped, and
   * no group gets more than `cap - running` (see claimPlan). Jobs without a
   * group are not capped.
   */
  groups?: { cap: number; running: ReadonlyMap<string, number> };
}

/** The condition of a claimable job: due, in the pool's lanes and kinds, in `only` or not in `skip`. */
function dueCondition(
  opts: ClaimOptions,
  now: string,
  groups: { skip?: string[]; only?: string } = {},
) {
  const kinds = opts.kinds ? sql`and kind in (${sql.join(opts.kinds)})` : sql``;
  const lane = opts.maxPriority === undefined
    ? sql``
    : sql`and priority <= ${opts.maxPriority}`;
  const lanes = opts.lanes
    ? sql`and priority in (${sql.join([...opts.lanes].sort((a, b) => a - b))})`
    : sql``;
  const group = groups.only !== undefined
    ? sql`and group_key = ${groups.only} and group_key is not null`
    : groups.skip?.length
    ? sql`and (group_key is null or group_key not in (${
      sql.join(groups.skip)
    }))`
    : sql``;
  return sql`state in ('available', 'retryable') and run_at <= ${now}
      ${lanes} ${kinds} ${lane} ${group}`;
}

/**
 * Claims up to `limit` due jobs, most urgent first, each with a fresh lease
 * token; with `groups`, no group past its cap (see claimPlan).
 */
export async function claim(db: Db, opts: ClaimOptions): Promise<JobRow[]> {
  if (
    opts.limit <= 0 || opts.kinds?.length === 0 || opts.lanes?.length === 0
  ) {
    return [];
  }
  const plan = claimPlan(opts);
  const jobs = await claimWhere(db, opts, plan.limit, { skip: plan.skip });
  for (const [group, allowance] of plan.tight) {
    const room = opts.limit - jobs.length;
    if (room <= 0) break;
    jobs.push(
      ...await claimWhere(db, opts, Math.min(allowance, room), {
        only: group,
      }),
    );
  }
  // RETURNING does not keep the subquery's order.
  return jobs.sort((a, b) =>
    a.priority - b.priority || a.runAt.localeCompare(b.runAt)
  );
}

async function claimWhere(
  db: Db,
  opts: ClaimOptions,
  limit: number,
  groups: { skip?: string[]; only?: string },
): Promise<JobRow[]> {
  const now = toDbTime(opts.now);
  const due = dueCondition(opts, now, groups);
  // An UPDATE that matches nothing still takes the write lock and costs as
  // much as a small write; an idle or woken-for-nothing pool asks first.
  const { rows: any } = await sql`select 1 from jobs where ${due} limit 1`
    .execute(db);
  if (any.length === 0) return [];
  // **A job is claimed by exactly one worker: the select and the update are ONE statement, so
  // SQLite's single writer (or sqld's) serialises two claimers and the second sees `running`.**
  // The state list is written as literals so the planner can use the partial jobs_claim_idx.
  // **From here the claimer MUST end every returned job with complete(), fail() or release();
  // if it dies first, the lease expires and rescueExpiredLeases() hands the job back.**
  const { rows } = await sql<JobsTable>`
    update jobs
    set state = 'running',
        attempt = attempt + 1,
        locked_by = ${opts.workerId},
        locked_until = ${toDbTime(addMs(opts.now, opts.leaseMs))},
        lease_token = lower(hex(randomblob(16))),
        updated_at = ${now}
    where id in (
      select id from jobs where ${due}
      order by priority, run_at limit ${limit})
    returning *`.execute(db);
  return rows.map(toJobRow);
}

/** Marks a job completed; false when the lease was lost (expired and rescued, or released). */
export async function complete(
  db: Executor,
  job: JobLease,
  now: Date,
): Promise<boolean> {
  const at = toDbTime(now);
  const r = await db.updateTable("jobs")
    .set({
      state: "completed",
      finalized_at: at,
      locked_until: null,
      lease_token: null,
      updated_at: at,
    })
    .where("id", "=", job.id)
    .where("lease_token", "=", job.leaseToken)
    .where("state", "=", "running")
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export interface FailOptions {
  error: string;
  /** False for permanent errors: the job is discarded at once. */
  retryable: boolean;
  /** When to retry; defaults to now + backoffMs(attempt). */
  retryAt?: Date;
  now: Date;
}

/** Records a failed attempt: retryable until `max_attempts`, then discarded; "lost" without the lease. */
export async function fail(
  db: Executor,
  job: ClaimedJob,
  opts: FailOptions,
): Promise<FailOutcome> {
  const now = toDbTime(opts.now);
  const retryAt = toDbTime(
    opts.retryAt ?? addMs(opts.now, backoffMs(job.attempt)),
  );
  const error = clip(opts.error);
  const permanent = opts.retryable ? 0 : 1;
  const final = sql`(${permanent} = 1 or attempt >= max_attempts)`;
  const { rows } = await sql<{ state: "retryable" | "discarded" }>`
    update jobs
    set state = case when ${final} then 'discarded' else 'retryable' end,
        run_at = case when ${final} then run_at else ${retryAt} end,
        finalized_at = case when ${final} then ${now} else null end,
        errors = json_insert(errors, '$[#]',
          json_object('at', ${now}, 'attempt', attempt, 'error', ${error})),
        locked_until = null,
        lease_token = null,
        updated_at = ${now}
    where id = ${job.id} and lease_token = ${job.leaseToken} and state = 'running'
    returning state`.execute(db);
  return rows[0]?.state ?? "lost";
}

export interface ReleaseOptions {
  runAt: Date;
  now: Date;
  /** Appended to `errors` (e.g. "Released at shutdown") so the history shows the lost run. */
  note?: string;
}

/** Gives a job back without counting the attempt (snooze, shutdown); false without the lease. */
export async function release(
  db: Executor,
  job: JobLease,
  opts: ReleaseOptions,
): Promise<boolean> {
  const now = toDbTime(opts.now);
  const note = opts.note === undefined ? undefined : clip(opts.note);
  const errors = note === undefined
    ? sql`errors`
    : sql`json_insert(errors, '$[#]',
        json_object('at', ${now}, 'attempt', attempt, 'error', ${note}))`;
  const r = await sql`
    update jobs
    set state = 'available',
        attempt = max(attempt - 1, 0),
        run_at = ${toDbTime(opts.runAt)},
        errors = ${errors},
        locked_until = null,
        lease_token = null,
        updated_at = ${now}
    where id = ${job.id} and lease_token = ${job.leaseToken} and state = 'running'`
    .execute(db);
  return Number(r.numAffectedRows ?? 0) === 1;
}

/** Pushes a running job's lease to `until` (heartbeat); false when the lease was lost. */
export async function extendLease(
  db: Executor,
  job: JobLease,
  opts: { until: Date; now: Date },
): Promise<boolean> {
  const r = await db.updateTable("jobs")
    .set({
      locked_until: toDbTime(opts.until),
      updated_at: toDbTime(opts.now),
    })
    .where("id", "=", job.id)
    .where("lease_token", "=", job.leaseToken)
    .where("state", "=", "running")
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Makes waiting jobs with these unique keys due now (a job another one was waiting for has ended). */
export async function runNow(
  db: Executor,
  uniqueKeys: string[],
  now: Date,
): Promise<void> {
  if (uniqueKeys.length === 0) return;
  await db.updateTable("jobs").set({ run_at: toDbTime(now) })
    .where("unique_key", "in", uniqueKeys)
    .where("state", "in", ["available", "retryable"])
    .execute();
}

/**
 * Hands back running jobs whose lease expired (their worker died or hung): retryable now,
 * or discarded once past their last attempt. The old lease token stops working.
 */
export async function rescueExpiredLeases(db: Db, now: Date): Promise<number> {
  const at = toDbTime(now);
  // One run past max_attempts: a job lost on its last attempt (its worker
  // died) gets one more run, so its handler can record the final outcome
  // (a message marked failed, not left queued). A job that keeps killing its
  // worker is discarded after that.
  const last = sql`attempt > max_attempts`;
  const { rows } = await sql<{ id: string }>`
    update jobs
    set state = case when ${last} then 'discarded' else 'retryable' end,
        finalized_at = case when ${last} then ${at} else null end,
        run_at = ${at},
        errors = json_insert(errors, '$[#]', json_object('at', ${at}, 'attempt', attempt,
          'error', 'Lease expired at ' || locked_until || ' on worker "' || coalesce(locked_by, '') || '"')),
        locked_until = null,
        lease_token = null,
        updated_at = ${at}
    where state = 'running' and locked_until < ${at}
    returning id`.execute(db);
  return rows.length;
}

/** Rows deleted per statement, so pruning never holds the write lock for long. */
const PRUNE_BATCH = 1_000;

/** Deletes completed and discarded jobs finalized before `olderThan`; returns how many. */
export async function pruneFinished(db: Db, olderThan: Date): Promise<number> {
  const cutoff = toDbTime(olderThan);
  let total = 0;
  for (;;) {
    const r = await sql`
      delete from jobs where id in (
        select id from jobs
        where finalized_at is not null and finalized_at < ${cutoff}
          and state in ('completed', 'discarded')
        limit ${PRUNE_BATCH})`.execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    total += n;
    if (n < PRUNE_BATCH) return total;
  }
}

/** Number of jobs per state (every state present, zero when empty). */
export async function countByState(db: Db): Promise<Record<string, number>> {
  const rows = await db.selectFrom("jobs")
    .select(["state", (eb) => eb.fn.countAll<number>().as("n")])
    .groupBy("state")
    .execute();
  const out: Record<string, number> = {
    available: 0,
    running: 0,
    retryable: 0,
    completed: 0,
    discarded: 0,
  };
  for (const r of rows) out[r.state] = Number(r.n);
  return out;
}

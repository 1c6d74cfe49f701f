/** The durable job table: enqueue in the caller's transaction, claim with one statement, settle under a lease token. */
import { CompiledQuery, sql } from "kysely";
import type { Db, Executor, JobsTable } from "../db/schema.ts";
import { fromJson, toJson } from "../db/json.ts";
import { addMs, toDbTime } from "../db/time.ts";
import { newId } from "../ids.ts";
import { backoffMs } from "./retry_policy.ts";
import {
  type GroupLimits,
  type RingMember,
  ringOrder,
} from "./queue_groups.ts";
import { LAST_ATTEMPT_SQL, PAST_LAST_ATTEMPT_SQL } from "./attempts.ts";
import {
  DEFAULT_MAX_ATTEMPTS,
  isJobKind,
  JOB_KINDS,
  type KindSpec,
} from "./kinds.ts";
import type {
  AnyJobInput,
  ClaimedJob,
  EnqueueInput,
  FailOutcome,
  JobError,
  JobLease,
  JobRow,
} from "./types.ts";

export type {
  AnyJobInput,
  ClaimedJob,
  EnqueueInput,
  FailOutcome,
  JobError,
  JobLease,
  JobRow,
  JobState,
} from "./types.ts";

export { DEFAULT_MAX_ATTEMPTS, PRIORITY } from "./kinds.ts";

/** Rows per multi-row insert (18 parameters each stays far below SQLite's limit). */
const INSERT_CHUNK = 100;

/** Longest error text kept per attempt. */
const MAX_ERROR_CHARS = 2_000;

function toRow(job: AnyJobInput, now: Date): JobsTable {
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

function toJobRow(
  r: Pick<
    JobsTable,
    | "id"
    | "kind"
    | "priority"
    | "payload"
    | "attempt"
    | "max_attempts"
    | "run_at"
    | "lease_token"
    | "unique_key"
    | "group_key"
    | "errors"
  >,
): JobRow {
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
   * no group gets more than `cap - running` (see claimGrouped). Jobs without
   * a group are not capped.
   */
  groups?: GroupLimits;
  /**
   * Look for a due job before the claiming update (the default). A pool
   * whose last claim came back full passes false: there is more.
   */
  probe?: boolean;
  /**
   * The last `slots` of `limit` take only jobs with priority <= `maxPriority`
   * (the reserved slot of the worker pool), in the same statement: jobs are
   * taken in priority order, so a job past `limit - slots` that is not
   * urgent means no urgent job is left. Not with `groups`.
   */
  reserve?: { slots: number; maxPriority: number };
}

/**
 * The condition of a claimable job (due, in the pool's lanes and kinds, and
 * of `group`: a key, null for none, any without it) as SQL text and its parameters. Written by hand,
 * not with the query builder: the pool claims many times a second.
 */
function dueCondition(
  opts: ClaimOptions,
  now: string,
  group?: RingMember,
): { text: string; params: unknown[] } {
  const params: unknown[] = [now];
  let text = "state in ('available', 'retryable') and run_at <= ?";
  if (opts.lanes) {
    // Integers (PRIORITY values), written as literals so each lane is its own index range.
    const lanes = [...opts.lanes].map((n) => Math.trunc(Number(n)))
      .sort((a, b) => a - b);
    text += ` and priority in (${lanes.join(", ")})`;
  }
  if (opts.kinds) {
    text += ` and kind in (${opts.kinds.map(() => "?").join(", ")})`;
    params.push(...opts.kinds);
  }
  if (opts.maxPriority !== undefined) {
    text += " and priority <= ?";
    params.push(opts.maxPriority);
  }
  if (group === null) text += " and group_key is null";
  else if (group !== undefined) {
    text += " and group_key = ? and group_key is not null";
    params.push(group);
  }
  return { text, params };
}

/**
 * Claims up to `limit` due jobs, most urgent first, each with a fresh lease
 * token; with `groups`, no group past its cap (see claimGrouped).
 */
export async function claim(db: Db, opts: ClaimOptions): Promise<JobRow[]> {
  if (
    opts.limit <= 0 || opts.kinds?.length === 0 || opts.lanes?.length === 0
  ) {
    return [];
  }
  const jobs = opts.groups
    ? await claimGrouped(db, opts, opts.groups)
    : await claimWhere(db, opts, opts.limit);
  // RETURNING does not keep the subquery's order.
  return jobs.sort((a, b) =>
    a.priority - b.priority || a.runAt.localeCompare(b.runAt)
  );
}

/** A claimable group: its jobs' state, as in jobs_group_idx, whose order skip-scans it. */
const GROUPED = "state in ('available', 'retryable') and group_key is not null";

/**
 * Every group key with available or retryable jobs, ascending: one seek in
 * jobs_group_idx per group (the next key after the last), however long each
 * group's backlog. Due or not is left to each group's own claim.
 */
const GROUP_KEYS_SQL = `with recursive g(k) as (
    select (select group_key from jobs where ${GROUPED}
      order by group_key limit 1)
    union all
    select (select group_key from jobs where ${GROUPED} and group_key > g.k
      order by group_key limit 1)
    from g where g.k is not null)
  select k from g where k is not null`;

/**
 * A capped claim, one group at a time, so it never reads the backlog of a
 * full group: the groups with work come from a skip-scan of jobs_group_idx,
 * and each group with room (and the jobs without a group, through
 * jobs_ungrouped_idx) is claimed with its own statement, up to its room,
 * in priority then run_at order. Members are visited around the ring from
 * `groups.after`, so slots fewer than the room go to each group in turn.
 */
async function claimGrouped(
  db: Db,
  opts: ClaimOptions,
  groups: GroupLimits,
): Promise<JobRow[]> {
  const { rows } = await db.executeQuery<{ k: string }>(
    CompiledQuery.raw(GROUP_KEYS_SQL, []),
  );
  const jobs: JobRow[] = [];
  const probing = { ...opts, probe: true };
  for (const member of ringOrder(rows.map((r) => r.k), groups.after)) {
    const left = opts.limit - jobs.length;
    if (left <= 0) break;
    const room = member === null
      ? left
      : Math.min(left, groups.cap - (groups.running.get(member) ?? 0));
    if (room <= 0) continue;
    jobs.push(...await claimWhere(db, probing, room, member));
  }
  return jobs;
}

/** What a claimer reads of its jobs (toJobRow). */
const CLAIMED_COLUMNS =
  "id, kind, priority, payload, attempt, max_attempts, run_at, lease_token, unique_key, group_key, errors";

/** The ids to claim: the first `limit` due jobs, the reserved ones only if urgent. */
function pick(
  due: { text: string; params: unknown[] },
  limit: number,
  reserve: ClaimOptions["reserve"],
): { text: string; params: unknown[] } {
  const reserved = reserve !== undefined && reserve.slots > 0;
  const first = `select id${reserved ? ", priority, run_at" : ""}
      from jobs where ${due.text} order by priority, run_at limit ?`;
  if (!reserved) return { text: first, params: [...due.params, limit] };
  return {
    text: `select id from (
        select id, priority, row_number() over (order by priority, run_at) as n
        from (${first}))
      where n <= ? or priority <= ?`,
    params: [...due.params, limit, limit - reserve.slots, reserve.maxPriority],
  };
}

async function claimWhere(
  db: Db,
  opts: ClaimOptions,
  limit: number,
  group?: RingMember,
): Promise<JobRow[]> {
  const now = toDbTime(opts.now);
  const due = dueCondition(opts, now, group);
  // An UPDATE that matches nothing still takes the write lock and costs as
  // much as a small write; an idle or woken-for-nothing pool asks first
  // (a pool whose last claim came back full knows there is more).
  if (opts.probe !== false) {
    const { rows: any } = await db.executeQuery(CompiledQuery.raw(
      `select 1 from jobs where ${due.text} limit 1`,
      due.params,
    ));
    if (any.length === 0) return [];
  }
  const picked = pick(
    due,
    limit,
    group === undefined ? opts.reserve : undefined,
  );
  // **A job is claimed by exactly one worker: the select and the update are ONE statement, so
  // SQLite's single writer (or sqld's) serialises two claimers and the second sees `running`.**
  // The state list is written as literals so the planner can use the partial jobs_claim_idx.
  // **From here the claimer MUST end every returned job with complete(), fail() or release();
  // if it dies first, the lease expires and rescueExpiredLeases() hands the job back.**
  const { rows } = await db.executeQuery<JobsTable>(CompiledQuery.raw(
    `update jobs
    set state = 'running',
        attempt = attempt + 1,
        locked_by = ?,
        locked_until = ?,
        lease_token = lower(hex(randomblob(16))),
        updated_at = ?
    where id in (${picked.text})
    returning ${CLAIMED_COLUMNS}`,
    [
      opts.workerId,
      toDbTime(addMs(opts.now, opts.leaseMs)),
      now,
      ...picked.params,
    ],
  ));
  return rows.map(toJobRow);
}

/**
 * Settling is batched: completing, failing or releasing any number of jobs is
 * one statement of each kind. Each job still proves its lease: the update
 * joins the job table on (id, lease_token) from a JSON list of the jobs, so a
 * job whose lease was lost (expired and rescued, or released) is left as it
 * is and missing from the answer while the others settle. The SQL is written
 * once, not compiled per call, since the worker pool runs it for every job.
 */
const SETTLE_FROM = (columns: string) =>
  `from (select ${columns} from json_each(?)) as s
    where jobs.id = s.id and jobs.lease_token = s.token and jobs.state = 'running'`;

const COMPLETE_SQL = `update jobs
    set state = 'completed', finalized_at = ?, locked_until = null,
        lease_token = null, updated_at = ?
    ${SETTLE_FROM("value ->> 0 as id, value ->> 1 as token")}
    returning jobs.id`;

// A failure is final when it is permanent or the attempt was the last (LAST_ATTEMPT).
const FINAL = `(s.permanent = 1 or ${LAST_ATTEMPT_SQL})`;
const FAIL_SQL = `update jobs
    set state = case when ${FINAL} then 'discarded' else 'retryable' end,
        run_at = case when ${FINAL} then jobs.run_at else s.retry_at end,
        finalized_at = case when ${FINAL} then ?1 else null end,
        errors = json_insert(jobs.errors, '$[#]',
          json_object('at', ?1, 'attempt', jobs.attempt, 'error', s.error)),
        locked_until = null,
        lease_token = null,
        updated_at = ?1
    ${
  SETTLE_FROM(`value ->> 0 as id, value ->> 1 as token, value ->> 2 as error,
      value ->> 3 as permanent, value ->> 4 as retry_at`).replace("?", "?2")
}
    returning jobs.id, jobs.state`;

const RELEASE_SQL = `update jobs
    set state = 'available',
        attempt = max(jobs.attempt - 1, 0),
        run_at = s.run_at,
        errors = case when s.note is null then jobs.errors
          else json_insert(jobs.errors, '$[#]',
            json_object('at', ?1, 'attempt', jobs.attempt, 'error', s.note)) end,
        locked_until = null,
        lease_token = null,
        updated_at = ?1
    ${
  SETTLE_FROM(
    "value ->> 0 as id, value ->> 1 as token, value ->> 2 as run_at, value ->> 3 as note",
  ).replace("?", "?2")
}
    returning jobs.id`;

async function settleRows<R>(
  db: Executor,
  text: string,
  params: unknown[],
): Promise<R[]> {
  const r = await db.executeQuery<R>(CompiledQuery.raw(text, params));
  return r.rows;
}

/** Marks jobs completed in one statement; returns the ids completed (a job without its lease is left out). */
export async function completeMany(
  db: Executor,
  jobs: readonly JobLease[],
  now: Date,
): Promise<Set<string>> {
  if (jobs.length === 0) return new Set();
  const at = toDbTime(now);
  const list = JSON.stringify(jobs.map((j) => [j.id, j.leaseToken]));
  const rows = await settleRows<{ id: string }>(db, COMPLETE_SQL, [
    at,
    at,
    list,
  ]);
  return new Set(rows.map((r) => r.id));
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
  const list = JSON.stringify(failures.map((f) => [
    f.job.id,
    f.job.leaseToken,
    clip(f.error),
    f.retryable ? 0 : 1,
    toDbTime(f.retryAt ?? addMs(now, backoffMs(f.job.attempt))),
  ]));
  const rows = await settleRows<{ id: string; state: FailOutcome }>(
    db,
    FAIL_SQL,
    [toDbTime(now), list],
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
}

/** Gives jobs back without counting the attempt, in one statement; returns the ids released. */
export async function releaseMany(
  db: Executor,
  releases: readonly Release[],
  now: Date,
): Promise<Set<string>> {
  if (releases.length === 0) return new Set();
  const list = JSON.stringify(releases.map((r) => [
    r.job.id,
    r.job.leaseToken,
    toDbTime(r.runAt),
    r.note === undefined ? null : clip(r.note),
  ]));
  const rows = await settleRows<{ id: string }>(db, RELEASE_SQL, [
    toDbTime(now),
    list,
  ]);
  return new Set(rows.map((r) => r.id));
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
  const last = sql.raw(PAST_LAST_ATTEMPT_SQL);
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

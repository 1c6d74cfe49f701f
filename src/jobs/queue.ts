/** The durable job table: enqueue in the caller's transaction (queue_enqueue.ts), claim with one statement, settle under a lease token (queue_settle.ts), rescue and prune (queue_upkeep.ts); all re-exported here. */
import { CompiledQuery } from "kysely";
import type { Db } from "../db/schema.ts";
import { fromJson } from "../db/json.ts";
import { ROWS_AS_ARRAYS } from "../db/row_shape.ts";
import { addMs, toDbTime } from "../db/time.ts";
import {
  fullOwners,
  type GroupLimits,
  OWNER_SEPARATOR,
  planClaim,
  type RingMember,
} from "./queue_ring.ts";
import type { JobError, JobRow } from "./types.ts";

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

export { DEFAULT_MAX_ATTEMPTS, PRIORITY, WEBHOOK_LANES } from "./kinds.ts";
export { ownedGroupKey } from "./queue_ring.ts";
export {
  enqueue,
  enqueueCompiled,
  enqueueMany,
  enqueueManyCompiled,
  enqueueManyUnchecked,
  enqueueManyWhere,
  enqueueUnchecked,
} from "./queue_enqueue.ts";
export {
  complete,
  completeMany,
  completeManyQueries,
  extendLease,
  extendLeases,
  fail,
  failMany,
  type FailOptions,
  type Failure,
  type Release,
  release,
  releaseMany,
  type ReleaseOptions,
  wakeHeld,
} from "./queue_settle.ts";
export {
  hasOpenJob,
  pruneFinished,
  rescueExpiredLeases,
} from "./queue_upkeep.ts";
export { countByState } from "./queue_stats.ts";

/** What a claimer reads of its jobs, in this order (toJobRow). */
const CLAIMED = [
  "rowid",
  "id",
  "kind",
  "priority",
  "payload",
  "attempt",
  "max_attempts",
  "run_at",
  "lease_token",
  "unique_key",
  "group_key",
  "errors",
  "held_since",
] as const;

/** A claimed row: its values in CLAIMED order (embedded SQLite) or by name (libSQL). */
function toJobRow(r: unknown[] | Record<string, unknown>): JobRow {
  const a = Array.isArray(r) ? r : CLAIMED.map((c) => r[c]);
  return {
    id: a[1] as string,
    kind: a[2] as string,
    priority: a[3] as number,
    payload: fromJson<unknown>(a[4] as string, null),
    attempt: a[5] as number,
    maxAttempts: a[6] as number,
    runAt: a[7] as string,
    leaseToken: (a[8] as string | null) ?? "",
    uniqueKey: a[9] as string | null,
    groupKey: a[10] as string | null,
    errors: fromJson<JobError[]>(a[11] as string, []),
    heldSince: (a[12] as string | null) ?? null,
    rowid: a[0] as number,
  };
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
   * Caps jobs in flight per group and per owner of groups: a group with
   * `cap` running, or an owner with `ownerCap`, is skipped, and the slots go
   * round-robin by owner, then by group (see claimGrouped). Jobs without a
   * group are not capped.
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
 * The lanes a claim reads, ascending: the pool's, without those above
 * `maxPriority`. Integers (PRIORITY values), written into the SQL as
 * literals so each lane is its own range of jobs_claim_idx; the planner
 * reads every listed range and cannot drop one by the bound `priority <= ?`,
 * so an urgent claim that listed the batch lane read through the whole due
 * batch backlog (kept as a filter for a claim without lanes).
 */
function lanesOf(opts: ClaimOptions): number[] | undefined {
  if (!opts.lanes) return undefined;
  const max = opts.maxPriority ?? Infinity;
  return [...opts.lanes].map((n) => Math.trunc(Number(n)))
    .filter((n) => n <= max)
    .sort((a, b) => a - b);
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
  const lanes = lanesOf(opts);
  if (lanes) text += ` and priority in (${lanes.join(", ")})`;
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
    opts.limit <= 0 || opts.kinds?.length === 0 || lanesOf(opts)?.length === 0
  ) {
    return [];
  }
  const jobs = opts.groups
    ? await claimGrouped(db, opts, opts.groups)
    : await claimWhere(db, opts, opts.limit);
  // RETURNING does not keep the subquery's order. run_at is ISO text, so
  // code-unit order is time order (localeCompare would load ICU data and
  // cost far more per comparison).
  return jobs.sort((a, b) =>
    a.priority - b.priority ||
    (a.runAt < b.runAt ? -1 : a.runAt > b.runAt ? 1 : 0)
  );
}

/** A claimable group: its jobs' state, as in jobs_group_idx, whose order skip-scans it. */
const GROUPED = "state in ('available', 'retryable') and group_key is not null";

/**
 * Every group key with available or retryable jobs, ascending, each with
 * whether it has a due job in the claim's lanes and kinds; then one row
 * (key null) for the jobs without a group. One seek in jobs_group_idx per
 * group finds the next key after the last, however long each group's
 * backlog, and one more per lane answers "due": a group parked 30 s ahead
 * or only retrying later is not claimed, and the claim of one that is due
 * does not ask again. An owner in `full` (at its cap) shows its first key,
 * not due, and one seek steps past all its keys (`<owner>/` sorts before
 * `<owner>0`, the separator's next character). One statement for what was
 * the key list and a probe per member (a network round trip each on libSQL).
 */
function groupsDue(
  opts: ClaimOptions,
  now: string,
  full: readonly string[],
): { text: string; params: unknown[] } {
  const grouped = dueCondition(opts, now);
  const ungrouped = dueCondition(opts, now, null);
  let next = `(select group_key from jobs where ${GROUPED} and group_key > g.k
      order by group_key limit 1)`;
  let due = `exists (select 1 from jobs where ${grouped.text}
      and group_key = g.k and group_key is not null)`;
  const owners: string[] = [];
  if (full.length > 0) {
    // Without a full owner the statement is the same as before owners were.
    const cut = `instr(g.k, '${OWNER_SEPARATOR}')`;
    const isFull = `(${cut} > 0 and substr(g.k, 1, ${cut} - 1)
      in (select value from json_each(?)))`;
    const past = String.fromCharCode(OWNER_SEPARATOR.charCodeAt(0) + 1);
    next = `case when ${isFull} then (select group_key from jobs
      where ${GROUPED} and group_key >= substr(g.k, 1, ${cut} - 1) || '${past}'
      order by group_key limit 1) else ${next} end`;
    due = `case when ${isFull} then 0 else ${due} end`;
    owners.push(JSON.stringify(full), JSON.stringify(full));
  }
  return {
    text: `with recursive g(k) as (
    select (select group_key from jobs where ${GROUPED}
      order by group_key limit 1)
    union all
    select ${next} from g where g.k is not null)
  select k, ${due} as due from g where k is not null
  union all
  select null, exists (select 1 from jobs where ${ungrouped.text})`,
    params: [...owners, ...grouped.params, ...ungrouped.params],
  };
}

/**
 * A capped claim, one group at a time, so it never reads the backlog of a
 * full group or of any group of a full owner: the groups with work and
 * which of them are due come from one read (groupsDue), the slots are dealt
 * round-robin by owner, then by group (planClaim), and each due group dealt
 * some (and the jobs without a group, through jobs_ungrouped_idx) is
 * claimed with its own statement, in priority then run_at order. A group
 * with fewer due jobs than it was dealt leaves the ring and the rest are
 * dealt again; the owners' and groups' starts in the ring move from claim
 * to claim (`after`, `within`), so slots fewer than the room go to each in
 * turn.
 */
async function claimGrouped(
  db: Db,
  opts: ClaimOptions,
  groups: GroupLimits,
): Promise<JobRow[]> {
  const read = groupsDue(opts, toDbTime(opts.now), fullOwners(groups));
  const { rows } = await db.executeQuery<
    { k: string | null; due: number | bigint }
  >(CompiledQuery.raw(read.text, read.params));
  // The keys come ascending, the jobs without a group (null) last: the
  // ring wants null first.
  let due: RingMember[] = [];
  for (const r of rows) {
    if (Number(r.due) !== 1) continue;
    if (r.k === null) due.unshift(null);
    else due.push(r.k);
  }
  const running = new Map(groups.running);
  const jobs: JobRow[] = [];
  const known = { ...opts, probe: false };
  while (jobs.length < opts.limit && due.length > 0) {
    const plan = planClaim(due, opts.limit - jobs.length, {
      ...groups,
      running,
    });
    const drained = new Set<RingMember>();
    for (const [member, n] of plan) {
      const got = await claimWhere(db, known, n, member);
      jobs.push(...got);
      if (member !== null && got.length > 0) {
        running.set(member, (running.get(member) ?? 0) + got.length);
      }
      if (got.length < n) drained.add(member);
    }
    // Every group gave what it was dealt: the slots are used, or the rest
    // have no room.
    if (drained.size === 0) break;
    due = due.filter((m) => !drained.has(m));
  }
  return jobs;
}

/** An integer written into the SQL text. */
function int(n: number): number {
  return Math.trunc(Number(n));
}

/**
 * The rows to claim: the first `limit` due jobs, the reserved ones only if
 * urgent. Urgent jobs sort first (priority order), so that is the first
 * max(limit - slots, urgent due jobs up to limit): one LIMIT whose count of
 * urgent jobs reads their index range, not a window over the claimed rows
 * (which cost a sort and as much again as the claim). The limits are
 * literals, not parameters: SQLite runs `rowid in (... limit 16)` about
 * twice as fast as `limit ?` (raw node:sqlite, one claim of 16 in a
 * transaction: 131 us against 218), and a pool only ever sends a few of them.
 */
function pick(
  due: { text: string; params: unknown[] },
  limit: number,
  urgent: { text: string; params: unknown[] } | undefined,
  slots: number,
): { text: string; params: unknown[] } {
  const order =
    `select rowid from jobs where ${due.text} order by priority, run_at`;
  if (urgent === undefined) {
    return { text: `${order} limit ${int(limit)}`, params: due.params };
  }
  return {
    text: `${order} limit max(${int(limit - slots)}, (
        select count(*) from (select 1 from jobs
          where ${urgent.text} limit ${int(limit)})))`,
    params: [...due.params, ...urgent.params],
  };
}

/**
 * The condition of a job urgent enough for the reserved slots, or undefined
 * when none are reserved; its lanes end at the reserve's priority. With no
 * lane that urgent it is false: the reserved slots stay out of the limit.
 */
function urgentCondition(
  opts: ClaimOptions,
  now: string,
  group: RingMember | undefined,
): { text: string; params: unknown[] } | undefined {
  const reserve = opts.reserve;
  if (group !== undefined || reserve === undefined || reserve.slots <= 0) {
    return undefined;
  }
  const urgent = {
    ...opts,
    maxPriority: Math.min(opts.maxPriority ?? Infinity, reserve.maxPriority),
  };
  if (lanesOf(urgent)?.length === 0) return { text: "false", params: [] };
  return dueCondition(urgent, now);
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
    urgentCondition(opts, now, group),
    opts.reserve?.slots ?? 0,
  );
  // **A job is claimed by exactly one worker: the select and the update are ONE statement, so
  // SQLite's single writer (or sqld's) serialises two claimers and the second sees `running`.**
  // The state list is written as literals so the planner can use the partial jobs_claim_idx.
  // The picked rows go by rowid, which the index entries carry: no second
  // search of the primary key index per job. The rowid returned is a hint for
  // settling (see queue_settle.ts), checked there against the id.
  // **From here the claimer MUST end every returned job with complete(), fail() or release();
  // if it dies first, the lease expires and rescueExpiredLeases() hands the job back.**
  const { rows } = await db.executeQuery<unknown[] | Record<string, unknown>>(
    CompiledQuery.raw(
      `${ROWS_AS_ARRAYS}update jobs
    set state = 'running',
        attempt = attempt + 1,
        locked_by = ?,
        locked_until = ?,
        lease_token = lower(hex(randomblob(16))),
        updated_at = ?
    where rowid in (${picked.text})
    returning ${CLAIMED.join(", ")}`,
      [
        opts.workerId,
        toDbTime(addMs(opts.now, opts.leaseMs)),
        now,
        ...picked.params,
      ],
    ),
  );
  return rows.map(toJobRow);
}

/**
 * Job groups capped in flight (a webhook subscription's attempts): how much
 * one claim may take, and parking the backlog of a group held at its cap.
 */
import { sql } from "kysely";
import type { Db, Executor } from "../db/schema.ts";
import { addMs, toDbTime } from "../db/time.ts";
import type { Logger } from "../log.ts";
import type { JobRow } from "./types.ts";

export interface GroupLimits {
  cap: number;
  /** Running jobs per group key. */
  running: ReadonlyMap<string, number>;
}

/**
 * How many jobs one claim may take. With groups, no more than the smallest
 * allowance (`cap - running`) of a group that has jobs running, and no more
 * than `cap`: then no group, whichever jobs the claim finds, can go past its
 * cap, and full groups are left out of the claim altogether.
 */
export function claimLimit(
  opts: { limit: number; groups?: GroupLimits | undefined },
) {
  if (!opts.groups) return opts.limit;
  let limit = Math.min(opts.limit, opts.groups.cap);
  for (const n of opts.groups.running.values()) {
    if (n < opts.groups.cap) limit = Math.min(limit, opts.groups.cap - n);
  }
  return limit;
}

/**
 * Moves a group's due jobs beyond its first `keep` (by priority, run_at) to
 * run at `until`. A group held at its cap (a slow endpoint) then leaves no
 * backlog in the claim index's due range for every other group's claim to
 * step over. Returns how many jobs it moved.
 */
export async function parkGroup(
  db: Executor,
  opts: { groupKey: string; keep: number; until: Date; now: Date },
): Promise<number> {
  const now = toDbTime(opts.now);
  const r = await sql`
    update jobs set run_at = ${toDbTime(opts.until)}, updated_at = ${now}
    where id in (
      select id from jobs
      where group_key = ${opts.groupKey} and group_key is not null
        and state in ('available', 'retryable') and run_at <= ${now}
      order by priority, run_at limit -1 offset ${opts.keep})`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/**
 * Brings back up to `limit` of a group's parked jobs (those whose run_at is
 * one of `untils`), oldest first, to run now. Returns how many.
 */
export async function unparkGroup(
  db: Executor,
  opts: { groupKey: string; untils: string[]; limit: number; now: Date },
): Promise<number> {
  if (opts.untils.length === 0) return 0;
  const now = toDbTime(opts.now);
  const r = await sql`
    update jobs set run_at = ${now}, updated_at = ${now}
    where id in (
      select id from jobs
      where group_key = ${opts.groupKey} and group_key is not null
        and state in ('available', 'retryable')
        and run_at in (${sql.join(opts.untils)})
      order by priority, run_at limit ${opts.limit})`.execute(db);
  return Number(r.numAffectedRows ?? 0);
}

/** How long a parked job waits at most (if this process dies, others pick it up then). */
const PARK_MS = 30_000;
/**
 * Only a group whose oldest running job has run this long is parked: a slow
 * endpoint, not a fast one that a busy moment filled up.
 */
const PARK_SLOW_MS = 1_000;
/** A group's parking is looked at no more often than this. */
const TEND_EVERY_MS = 100;

interface Tended {
  /** run_at values this process parked the group's jobs at (still ahead). */
  untils: Set<string>;
  checkAt: number;
}

/**
 * A pool's per-group cap: the claim option from what runs now, and parking.
 * A group held at its cap by slow jobs keeps 2 x cap due jobs and has the
 * rest of its due backlog parked (run_at moved 30 s ahead), so other groups'
 * claims never wade through it; as soon as the group is no longer slow and
 * full, its parked jobs come back 2 x cap at a time. Each job is moved a
 * bounded number of times, and a parked job of a dead process runs after 30 s.
 */
export class GroupCap {
  readonly cap: number;
  #db: Db;
  #log: Logger;
  #tended = new Map<string, Tended>();

  constructor(cap: number, deps: { db: Db; log: Logger }) {
    this.cap = cap;
    this.#db = deps.db;
    this.#log = deps.log;
  }

  /** The `groups` claim option for the jobs running now. */
  limits(running: Iterable<JobRow>): GroupLimits {
    const counts = new Map<string, number>();
    for (const job of running) {
      if (job.groupKey !== null) {
        counts.set(job.groupKey, (counts.get(job.groupKey) ?? 0) + 1);
      }
    }
    return { cap: this.cap, running: counts };
  }

  /** Parks slow full groups' backlogs and brings back those of groups that can take work again. */
  async tend(
    running: Iterable<{ job: JobRow; startedAt: number }>,
    now: Date,
  ): Promise<void> {
    const groups = new Map<string, { n: number; oldest: number }>();
    for (const { job, startedAt } of running) {
      if (job.groupKey === null) continue;
      const g = groups.get(job.groupKey) ?? { n: 0, oldest: startedAt };
      groups.set(job.groupKey, {
        n: g.n + 1,
        oldest: Math.min(g.oldest, startedAt),
      });
    }
    const at = now.getTime();
    for (const key of new Set([...groups.keys(), ...this.#tended.keys()])) {
      const g = groups.get(key);
      const slow = g !== undefined && g.n >= this.cap &&
        at - g.oldest >= PARK_SLOW_MS;
      const state = this.#tended.get(key);
      if (!slow && !state) continue;
      const tended = state ?? { untils: new Set<string>(), checkAt: 0 };
      if (at < tended.checkAt) continue;
      tended.checkAt = at + TEND_EVERY_MS;
      for (const until of tended.untils) {
        if (Date.parse(until) <= at) tended.untils.delete(until);
      }
      if (slow) await this.#park(key, tended, now);
      else if (tended.untils.size > 0) {
        await unparkGroup(this.#db, {
          groupKey: key,
          untils: [...tended.untils],
          limit: 2 * this.cap,
          now,
        });
      }
      if (tended.untils.size === 0 && !slow) this.#tended.delete(key);
      else this.#tended.set(key, tended);
    }
  }

  async #park(group: string, tended: Tended, now: Date): Promise<void> {
    const until = addMs(now, PARK_MS);
    const moved = await parkGroup(this.#db, {
      groupKey: group,
      keep: 2 * this.cap,
      until,
      now,
    });
    if (moved === 0) return;
    tended.untils.add(toDbTime(until));
    this.#log.debug("Parked the backlog of a slow full group", {
      group,
      moved,
    });
  }
}

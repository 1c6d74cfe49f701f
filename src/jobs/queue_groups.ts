/**
 * Job groups capped in flight (a webhook subscription's attempts, owned by
 * its account): the pool's caps and ring cursors (the order itself is
 * queue_ring.ts's), and parking the backlog of a group held at its cap.
 */
import { sql } from "kysely";
import type { Db, Executor } from "../db/schema.ts";
import { addMs, toDbTime } from "../db/time.ts";
import type { Logger } from "../log.ts";
import type { JobRow } from "./types.ts";
import {
  type GroupLimits,
  moveWithin,
  nextAfter,
  type RingMember,
} from "./queue_ring.ts";

export {
  type GroupLimits,
  nextAfter,
  type RingMember,
  ringOrder,
} from "./queue_ring.ts";

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
 * Brings back up to `limit` (-1: all) of a group's parked jobs (those whose
 * run_at is one of `untils`), oldest first, to run now. Returns how many.
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
/** A group whose jobs take this long is slow (see GroupCap.tend). */
const PARK_SLOW_MS = 1_000;
/** Weight of the newest job in a group's average duration. */
const EMA_WEIGHT = 0.2;
/** Owners whose cursor among their groups is kept (the most recently served). */
const MAX_CURSORS = 1_024;
/** A group's parking is looked at no more often than this. */
const TEND_EVERY_MS = 100;

interface Tended {
  /** run_at values this process parked the group's jobs at (still ahead). */
  untils: Set<string>;
  checkAt: number;
}

/**
 * A pool's per-group and per-owner caps: the claim option from what runs
 * now, the ring cursors, and parking.
 * A slow group (see tend) keeps 2 x cap due jobs; the rest of its due backlog
 * is parked (run_at moved 30 s ahead) so other groups' claims never wade
 * through it, and comes back 2 x cap at a time as the group runs short. A
 * group that is fast again gets every parked job back at once. Parked jobs of
 * a process that died run after 30 s.
 */
export class GroupCap {
  readonly cap: number;
  /** At most this many running jobs per owner (an account); none without it. */
  readonly ownerCap: number | undefined;
  #db: Db;
  #log: Logger;
  #averageMs = new Map<string, number>();
  #tended = new Map<string, Tended>();
  #after: RingMember | undefined;
  /** Each owner's cursor among its groups, least recently moved first (see claimed). */
  #within = new Map<string, string>();

  constructor(
    caps: { cap: number; ownerCap?: number | undefined },
    deps: { db: Db; log: Logger },
  ) {
    this.cap = caps.cap;
    this.ownerCap = caps.ownerCap;
    this.#db = deps.db;
    this.#log = deps.log;
  }

  /**
   * The `groups` claim option for the jobs running now. The counts are
   * taken from them at each claim, not kept up to date on the side: a job
   * stops counting for its group and its owner when it leaves the pool's
   * running set, whichever way it ended (success, failure, lost lease,
   * released at shutdown).
   */
  limits(running: Iterable<JobRow>): GroupLimits {
    const counts = new Map<string, number>();
    for (const job of running) {
      if (job.groupKey !== null) {
        counts.set(job.groupKey, (counts.get(job.groupKey) ?? 0) + 1);
      }
    }
    return {
      cap: this.cap,
      running: counts,
      ownerCap: this.ownerCap,
      after: this.#after,
      within: this.#within,
    };
  }

  /** Moves the rings past the first owner, and each owner's first group, that `claimed` took jobs from. */
  claimed(claimed: readonly JobRow[]): void {
    this.#after = nextAfter(this.#after, claimed);
    moveWithin(this.#within, claimed);
    // An owner's cursor only matters while it has a backlog; the oldest go
    // first, so the map stays small however many accounts come and go.
    for (const owner of this.#within.keys()) {
      if (this.#within.size <= MAX_CURSORS) break;
      this.#within.delete(owner);
    }
  }

  /** Records how long one of the group's jobs ran. */
  finished(group: string, ms: number): void {
    const average = this.#averageMs.get(group);
    const next = average === undefined
      ? ms
      : average + EMA_WEIGHT * (ms - average);
    if (next < PARK_SLOW_MS / 10 && !this.#tended.has(group)) {
      this.#averageMs.delete(group); // fast: forget it, the map stays small
    } else this.#averageMs.set(group, next);
  }

  /**
   * Parks slow groups' backlogs, tops them up as they run short, and frees
   * those of groups fast again. A group is slow when its jobs average 1 s, or
   * when it is full and its oldest running job has run 1 s (before any job
   * of a dead endpoint has ended).
   */
  async tend(
    running: Iterable<{ job: JobRow; startedAt: number }>,
    now: Date,
  ): Promise<void> {
    const at = now.getTime();
    const stuck = new Map<string, { n: number; oldest: number }>();
    for (const { job, startedAt } of running) {
      if (job.groupKey === null) continue;
      const g = stuck.get(job.groupKey) ?? { n: 0, oldest: startedAt };
      stuck.set(job.groupKey, {
        n: g.n + 1,
        oldest: Math.min(g.oldest, startedAt),
      });
    }
    const groups = new Set([
      ...this.#averageMs.keys(),
      ...this.#tended.keys(),
      ...stuck.keys(),
    ]);
    for (const group of groups) {
      const s = stuck.get(group);
      const slow = (this.#averageMs.get(group) ?? 0) >= PARK_SLOW_MS ||
        (s !== undefined && s.n >= this.cap && at - s.oldest >= PARK_SLOW_MS);
      const tended = this.#tended.get(group) ??
        { untils: new Set<string>(), checkAt: 0 };
      if (!slow && tended.untils.size === 0) {
        this.#tended.delete(group);
        continue;
      }
      if (at < tended.checkAt) continue;
      tended.checkAt = at + TEND_EVERY_MS;
      for (const until of tended.untils) {
        if (Date.parse(until) <= at) tended.untils.delete(until);
      }
      if (slow) await this.#park(group, tended, now);
      else {
        await unparkGroup(this.#db, {
          groupKey: group,
          untils: [...tended.untils],
          limit: -1,
          now,
        });
        tended.untils.clear();
      }
      if (tended.untils.size === 0 && !slow) this.#tended.delete(group);
      else this.#tended.set(group, tended);
    }
  }

  async #park(group: string, tended: Tended, now: Date): Promise<void> {
    const keep = 2 * this.cap;
    const due = await countDue(this.#db, { groupKey: group, now, upTo: keep });
    if (due < this.cap && tended.untils.size > 0) {
      await unparkGroup(this.#db, {
        groupKey: group,
        untils: [...tended.untils],
        limit: keep,
        now,
      });
      return;
    }
    if (due < keep) return;
    const until = addMs(now, PARK_MS);
    const moved = await parkGroup(this.#db, {
      groupKey: group,
      keep,
      until,
      now,
    });
    if (moved === 0) return;
    tended.untils.add(toDbTime(until));
    this.#log.debug("Parked the backlog of a slow group", { group, moved });
  }
}

/** How many of a group's jobs are due, counting no further than `upTo`. */
async function countDue(
  db: Executor,
  opts: { groupKey: string; now: Date; upTo: number },
): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*) as n from (select 1 from jobs
      where group_key = ${opts.groupKey} and group_key is not null
        and state in ('available', 'retryable')
        and run_at <= ${toDbTime(opts.now)}
      limit ${opts.upTo})`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

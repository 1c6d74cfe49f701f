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

/** First and longest wait of a full group's parked backlog. */
const PARK_MIN_MS = 1_000;
const PARK_MAX_MS = 16_000;

/**
 * A pool's per-group cap: the claim option from what runs now, and the
 * parking of full groups' backlogs (1 s, doubling while the group stays full,
 * up to 16 s) so other groups' claims never wade through them.
 */
export class GroupCap {
  readonly cap: number;
  #db: Db;
  #log: Logger;
  #parked = new Map<string, { nextAt: number; ms: number }>();

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

  /** Parks the due backlog of each group at its cap, at most once per its current wait. */
  async parkFull(limits: GroupLimits, now: Date): Promise<void> {
    for (const group of this.#parked.keys()) {
      if ((limits.running.get(group) ?? 0) < this.cap) {
        this.#parked.delete(group);
      }
    }
    for (const [group, n] of limits.running) {
      if (n < this.cap) continue;
      const state = this.#parked.get(group) ?? { nextAt: 0, ms: PARK_MIN_MS };
      if (now.getTime() < state.nextAt) continue;
      const moved = await parkGroup(this.#db, {
        groupKey: group,
        keep: this.cap,
        until: addMs(now, state.ms),
        now,
      });
      this.#parked.set(group, {
        nextAt: now.getTime() + state.ms,
        ms: moved > 0 ? Math.min(state.ms * 2, PARK_MAX_MS) : state.ms,
      });
      if (moved > 0) {
        this.#log.debug("Parked the backlog of a full group", {
          group,
          moved,
          forMs: state.ms,
        });
      }
    }
  }
}

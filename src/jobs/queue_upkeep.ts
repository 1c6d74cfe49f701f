/** The job table's upkeep: leases of dead workers handed back, finished jobs pruned, open jobs of a kind looked up (re-exported by queue.ts). */
import { sql } from "kysely";
import type { Db, Executor } from "../db/schema.ts";
import { toDbTime } from "../db/time.ts";
import { newId } from "../ids.ts";
import { PAST_LAST_ATTEMPT_SQL } from "./attempts.ts";

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
        -- It was due when it was claimed: it keeps its place in its lane
        -- instead of going behind the backlog that came due meanwhile.
        run_at = min(run_at, ${at}),
        errors = json_insert(errors, '$[#]', json_object('at', ${at}, 'attempt', attempt,
          'error', 'Lease expired at ' || locked_until || ' on worker "' || coalesce(locked_by, '') || '"')),
        locked_until = null,
        lease_token = null,
        updated_at = ${at}
    where state = 'running' and locked_until < ${at}
    returning id`.execute(db);
  return rows.length;
}

/** Rows read per step, so pruning never holds the write lock for long. */
const PRUNE_BATCH = 1_000;

/**
 * Deletes completed and discarded jobs finalized before `olderThan`; returns how many.
 * A job is finalized after it is created and its id (UUIDv7) starts with its
 * creation time, so the candidates are the jobs whose id sorts before the
 * cutoff's: read along the primary key, a batch at a time after the last id
 * read, so each old row is read once and no index of finished jobs is kept
 * up to date by every completion (migration 0009).
 */
export async function pruneFinished(db: Db, olderThan: Date): Promise<number> {
  const cutoff = toDbTime(olderThan);
  // "xxxxxxxx-xxxx": the cutoff's millisecond; every id created before it sorts lower.
  const before = newId(olderThan.getTime()).slice(0, 13);
  let after = "";
  let total = 0;
  for (;;) {
    const { rows } = await sql<{ id: string; done: number }>`
      select id, (state in ('completed', 'discarded')
          and finalized_at < ${cutoff}) as done
      from jobs where id > ${after} and id < ${before}
      order by id limit ${PRUNE_BATCH}`.execute(db);
    if (rows.length === 0) return total;
    after = rows[rows.length - 1]!.id;
    const ids = rows.filter((r) => r.done === 1).map((r) => r.id);
    if (ids.length === 0) continue;
    const r = await sql`
      delete from jobs where id in (select value from json_each(${
      JSON.stringify(ids)
    }))
        and state in ('completed', 'discarded') and finalized_at < ${cutoff}`
      .execute(db);
    total += Number(r.numAffectedRows ?? 0);
  }
}

/**
 * Whether a job of `kind` whose unique key starts with `keyPrefix` is
 * waiting, retrying or running (so a tick does not queue a second one).
 */
export async function hasOpenJob(
  db: Executor,
  input: { kind: string; keyPrefix: string },
): Promise<boolean> {
  const r = await db.selectFrom("jobs").select("id")
    .where("kind", "=", input.kind)
    .where("state", "in", ["available", "running", "retryable"])
    .where("unique_key", "like", `${input.keyPrefix}%`)
    .executeTakeFirst();
  return r !== undefined;
}

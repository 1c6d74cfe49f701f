// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * Fewer index writes per job: a claim and a completion went through four
 * indexes besides the table, and every extra one is a B-tree write and a
 * dirty page in each commit of the worker pool.
 *
 * - jobs_finalized_idx goes: every completion wrote it for the sake of one
 *   prune a day. pruneFinished() now walks the primary key over the jobs
 *   created before its cutoff (ids are UUIDv7, time-ordered, and a job is
 *   finalized after it is created), src/jobs/queue.ts.
 * - jobs_ungrouped_idx keeps only the webhook lanes (PRIORITY.webhookManual
 *   = 8, PRIORITY.webhook = 10): the only claim that reads it is the capped
 *   claim of the webhook pool, and the main pool's jobs (no group, other
 *   lanes) no longer enter and leave it. A capped claim of other lanes reads
 *   jobs_claim_idx instead.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index jobs_finalized_idx`.execute(db);
  await sql`drop index jobs_ungrouped_idx`.execute(db);
  await sql`create index jobs_ungrouped_idx on jobs (priority, run_at)
    where state in ('available', 'retryable') and group_key is null
      and priority in (8, 10)`.execute(db);
}

// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * The due jobs without a group, alone: a pool with a per-group cap claims
 * them apart from its groups' (src/jobs/queue.ts, claimGrouped), and without
 * this index that claim would walk jobs_claim_idx past every grouped job.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index jobs_ungrouped_idx on jobs (priority, run_at)
    where state in ('available','retryable') and group_key is null`
    .execute(db);
}

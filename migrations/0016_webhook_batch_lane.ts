// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * The webhook pool serves a third lane, PRIORITY.webhookBatch = 12 (a
 * campaign's event deliveries, behind live chat's): its capped claim reads
 * the due jobs without a group with `priority in (8, 10, 12)`, which the
 * index of migration 0009 (`priority in (8, 10)`) no longer covers.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index jobs_ungrouped_idx`.execute(db);
  await sql`create index jobs_ungrouped_idx on jobs (priority, run_at)
    where state in ('available', 'retryable') and group_key is null
      and priority in (8, 10, 12)`.execute(db);
}

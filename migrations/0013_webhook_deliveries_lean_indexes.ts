// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * Two fewer B-tree writes per webhook delivery (every event makes one per
 * subscription), each read only by the daily prune:
 *
 * - webhook_deliveries_created_idx (created_at): pruneDeliveries() now walks
 *   the primary key over the ids created before its cutoff (UUIDv7 ids are
 *   time-ordered, and a row's id is never older than its created_at).
 * - webhook_deliveries_event_idx (event_id) where status = 'pending': every
 *   delivery entered and left it. pruneEvents() now reads the event ids of
 *   the pending rows once per statement, through webhook_deliveries_chain_idx
 *   (which holds exactly the pending rows), instead of probing per event.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index webhook_deliveries_created_idx`.execute(db);
  await sql`drop index webhook_deliveries_event_idx`.execute(db);
}

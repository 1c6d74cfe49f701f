// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * messages_inbound_idx (conversation_id, direction, created_at desc) has no
 * reader: the one query that filters messages by direction within a
 * conversation, latestInboundWithWamid(), orders by (created_at, id) and
 * SQLite plans it on messages_conversation_idx, which gives that order
 * (checked with explain query plan, with and without its `since` bound);
 * a conversation's cascade delete uses messages_conversation_idx too. Every
 * message insert wrote it all the same: one B-tree write fewer per message.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index messages_inbound_idx`.execute(db);
}

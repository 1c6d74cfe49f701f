// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * The panel lists conversations by last activity, newest first, keyset
 * paginated on (activity, id), where activity is the last message's time or,
 * for a conversation without messages, its creation. Declared ascending like
 * the other list indexes (migration 0012): the query reads it backwards.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index conversations_activity_idx on conversations
    (account_id, coalesce(last_message_at, created_at), id)`.execute(db);
}

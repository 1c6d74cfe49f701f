// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/** Counting a channel's queued batch sends (to pace new batches behind them) must not scan messages. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index messages_channel_backlog_idx on messages (channel_id, lane, status)`
    .execute(db);
}

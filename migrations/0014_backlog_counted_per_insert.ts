// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * messages_backlog_insert (migration 0010) ran an upsert of
 * channel_batch_backlog for every queued batch message inserted: a fifth of
 * the CPU of a batch's message insert (about 2 us of SQLite CPU per batch
 * message, replayed statement by statement). insertMessages(), through
 * which every message row is written, now adds each channel's queued batch
 * rows to the counter in one statement after its insert, in the same
 * transaction (so it commits or rolls back with the rows, a savepoint of a
 * group commit included). The update and delete triggers stay: they fire
 * only on the rows that change.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop trigger messages_backlog_insert`.execute(db);
}

// Frozen once landed: never edit, add a new migration instead.
// deno-lint-ignore-file no-explicit-any
import { type Kysely, sql } from "kysely";

/**
 * Each channel's next free send slot (ms, on the database's clock), for
 * instances sending on one libSQL server: every instance reserves its slots
 * here, so a number's sends stay paced at its rate across all of them
 * (src/upstream/send_slots.ts). Embedded SQLite keeps them in memory.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table send_slots (
    channel_id text primary key,
    next_ms real not null
  ) strict, without rowid`.execute(db);
}

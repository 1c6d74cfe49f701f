// Frozen once landed: never edit, add a new migration instead.
// deno-lint-ignore-file no-explicit-any
import { type Kysely, sql } from "kysely";

/**
 * One row per credential that made a request through an instance on
 * libSQL: its GCRA "theoretical arrival time" (src/domain/accounts/rate_limit.ts),
 * so every instance draws from the same bucket. Embedded SQLite keeps its
 * buckets in memory (one process) and never writes here.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table rate_buckets (
    key text primary key,
    tat_ms real not null
  ) strict, without rowid`.execute(db);
}

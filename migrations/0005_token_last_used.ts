// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/** Agents' user tokens record when they were last used, like API keys do. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table agents add column last_used_at text`.execute(db);
}

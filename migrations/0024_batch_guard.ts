// Frozen once landed: never edit, add a new migration instead.
// deno-lint-ignore-file no-explicit-any
import { type Kysely, sql } from "kysely";

/**
 * The table a write batch's guards insert into when what its unit read has
 * changed (src/db/atomic.ts): every row fails the check, so the insert fails
 * the batch as a whole, and the table stays empty.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table batch_guard (
    ok integer not null constraint batch_conflict check (ok = 1)
  ) strict`.execute(db);
}

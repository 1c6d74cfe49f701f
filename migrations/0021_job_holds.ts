// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/**
 * A job can be held: given back, without spending an attempt, until a named
 * condition clears (a send of a template Meta paused waits for it to be
 * approved again). `hold_key` names the condition (`template:<id>`), so
 * whoever clears it wakes the jobs waiting on it at once (wakeHeld, through
 * jobs_hold_idx, which holds only held jobs); `held_since` is when the job
 * was first held, so its handler can give up after a bound (24 h for a
 * paused template) however often it was looked at meanwhile.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table jobs add column hold_key text`.execute(db);
  await sql`alter table jobs add column held_since text`.execute(db);
  await sql`create index jobs_hold_idx on jobs (hold_key)
    where hold_key is not null`.execute(db);
}

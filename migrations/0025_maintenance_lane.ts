// Frozen once landed: never edit, add a new migration instead.
// deno-lint-ignore-file no-explicit-any
import { type Kysely, sql } from "kysely";

/**
 * The maintenance lane (cron's ticks and what they queue) moves from 40,
 * behind a campaign's sends, to 25, ahead of them (src/jobs/kinds.ts): the
 * jobs queued in it keep their place.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update jobs set priority = 25
    where priority = 40 and state in ('available', 'retryable', 'running')`
    .execute(db);
}

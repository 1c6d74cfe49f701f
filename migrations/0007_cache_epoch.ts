// deno-lint-ignore-file no-explicit-any
// Frozen once landed: never edit, add a new migration instead.
import { type Kysely, sql } from "kysely";

/** Each table whose rows the in-memory lookups cache, and the columns that matter. */
const WATCHED: [table: string, columns: string | null][] = [
  ["api_keys", "account_id, key_hash, scopes, rate_limit, revoked_at"],
  ["agents", "account_id, token_hash, visibility, revoked_at"],
  ["channels", null],
  ["templates", null],
];

/**
 * One counter every process reads to know whether its cached principals,
 * channels and templates are still current (src/db/lookup_cache.ts).
 * Triggers bump it on every change that matters, whichever process makes it
 * (the server, the admin CLI, another instance): not on the once-a-minute
 * last_used_at write.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table cache_epoch (
    id integer primary key check (id = 1),
    n integer not null
  ) strict`.execute(db);
  await sql`insert into cache_epoch (id, n) values (1, 0)`.execute(db);
  const bump = "update cache_epoch set n = n + 1 where id = 1";
  for (const [table, columns] of WATCHED) {
    const events: [string, string][] = [
      ["insert", "after insert"],
      ["delete", "after delete"],
      ["update", columns ? `after update of ${columns}` : "after update"],
    ];
    for (const [name, when] of events) {
      await sql.raw(
        `create trigger ${table}_${name}_cache_epoch ${when} on ${table}
         begin ${bump}; end`,
      ).execute(db);
    }
  }
}

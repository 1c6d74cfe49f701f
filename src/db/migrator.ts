import {
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  sql,
} from "kysely";
import { migrations } from "../../migrations/mod.ts";
import type { Database } from "./schema.ts";
import type { LibsqlAccess } from "./libsql_dialect.ts";

/** Where Kysely's Migrator records applied migrations (its default name). */
const MIGRATION_TABLE = "kysely_migration";

class StaticMigrationProvider implements MigrationProvider {
  getMigrations(): Promise<Record<string, Migration>> {
    return Promise.resolve(migrations);
  }
}

function migrator(db: Kysely<Database>): Migrator {
  return new Migrator({ db, provider: new StaticMigrationProvider() });
}

/**
 * The migrations recorded as applied, in one query; undefined when there is
 * no migration table yet. The Migrator answers the same by introspecting
 * every table and sorting names with localeCompare (which loads ICU data:
 * megabytes of idle memory), which start and every /readyz then paid.
 */
async function appliedNames(
  db: Kysely<Database>,
): Promise<Set<string> | undefined> {
  try {
    const { rows } = await sql<{ name: string }>`select name from ${
      sql.table(MIGRATION_TABLE)
    }`.execute(db);
    return new Set(rows.map((r) => r.name));
  } catch {
    return undefined;
  }
}

const KNOWN = Object.keys(migrations);

function allKnownIn(applied: Set<string> | undefined): boolean {
  return !!applied && KNOWN.every((name) => applied.has(name));
}

/**
 * The lock several processes starting together (instances on one libSQL
 * server, the CLI beside a server) take before migrating: one row, held
 * until `until_ms` and renewed while its holder migrates, so only one runs
 * the migrations and the others wait for them (Kysely's own lock does
 * nothing on SQLite: three instances on a fresh sqld all ran 0001, and two
 * failed with "table accounts already exists").
 */
const LOCK_TABLE = sql`create table if not exists migration_lock (
  id integer primary key check (id = 1),
  owner text not null,
  until_ms integer not null
)`;
const LOCK_MS = 30_000;
const LOCK_POLL_MS = 200;
/** How long a process waits for another's migrations before it gives up. */
const LOCK_WAIT_MS = 10 * 60_000;

async function takeLock(db: Kysely<Database>, owner: string): Promise<boolean> {
  const now = Date.now();
  const { rows } = await sql<{ owner: string }>`insert into migration_lock
      (id, owner, until_ms) values (1, ${owner}, ${now + LOCK_MS})
    on conflict (id) do update set owner = excluded.owner,
      until_ms = excluded.until_ms
      where migration_lock.until_ms < ${now} or migration_lock.owner = ${owner}
    returning owner`.execute(db);
  return rows[0]?.owner === owner;
}

async function dropLock(db: Kysely<Database>, owner: string): Promise<void> {
  await sql`delete from migration_lock where id = 1 and owner = ${owner}`
    .execute(db);
}

/**
 * Applies every pending migration, once across processes (see LOCK_TABLE);
 * throws naming the one that failed, or one this release does not know (a
 * newer release's: this one refuses to start on it, while instances of it
 * already running keep working beside the newer ones, since their own
 * migrations are all there: see migrationsCurrent).
 */
export async function migrateToLatest(
  db: Kysely<Database>,
  options: { libsql?: LibsqlAccess | undefined } = {},
): Promise<string[]> {
  // Loads the driver first (libSQL's is loaded on first use), so a URL its
  // client refuses fails with the client's message, not as a migration.
  await db.connection().execute(() => Promise.resolve());
  // The usual start: exactly the known migrations applied, nothing to do.
  // Anything else goes to the Migrator, under the lock: it applies the
  // pending ones, or refuses one this code does not know.
  if (exactlyKnown(await appliedNames(db))) return [];
  await LOCK_TABLE.execute(db);
  const owner = crypto.randomUUID();
  const deadline = Date.now() + LOCK_WAIT_MS;
  while (!(await takeLock(db, owner))) {
    if (exactlyKnown(await appliedNames(db))) return [];
    if (Date.now() > deadline) {
      throw new Error(
        `Cannot migrate database: another process has held the migration lock for over ${
          LOCK_WAIT_MS / 60_000
        } minutes (table migration_lock)`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, LOCK_POLL_MS));
  }
  const renew = setInterval(
    () => takeLock(db, owner).catch(() => {}),
    LOCK_MS / 3,
  );
  try {
    if (exactlyKnown(await appliedNames(db))) return [];
    return await runMigrations(db, options.libsql);
  } finally {
    clearInterval(renew);
    await dropLock(db, owner).catch(() => {});
  }
}

function exactlyKnown(applied: Set<string> | undefined): boolean {
  return allKnownIn(applied) && applied!.size === KNOWN.length;
}

async function runMigrations(
  db: Kysely<Database>,
  libsql: LibsqlAccess | undefined,
): Promise<string[]> {
  // Migrations run in interactive transactions (DDL), at start, alone.
  if (libsql) libsql.allowed = (libsql.allowed ?? 0) + 1;
  let outcome;
  try {
    outcome = await migrator(db).migrateToLatest();
  } finally {
    if (libsql) libsql.allowed! -= 1;
  }
  const { error, results } = outcome;
  const failed = results?.find((r) => r.status === "Error");
  if (error) {
    throw new Error(
      `Cannot migrate database: migration "${
        failed?.migrationName ?? "unknown"
      }" failed: ${(error as Error)?.message ?? String(error)}`,
      { cause: error },
    );
  }
  return (results ?? []).filter((r) => r.status === "Success").map((r) =>
    r.migrationName
  );
}

/** True when every known migration has been applied. */
export async function migrationsCurrent(
  db: Kysely<Database>,
): Promise<boolean> {
  return allKnownIn(await appliedNames(db));
}

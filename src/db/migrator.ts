import {
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
  sql,
} from "kysely";
import { migrations } from "../../migrations/mod.ts";
import type { Database } from "./schema.ts";

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

/** Applies every pending migration; throws naming the one that failed. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  // Loads the driver first (libSQL's is loaded on first use), so a URL its
  // client refuses fails with the client's message, not as a migration.
  await db.connection().execute(() => Promise.resolve());
  // The usual start: exactly the known migrations applied, nothing to do.
  // Anything else (pending ones, one this code does not know) goes to the
  // Migrator, which applies or refuses as before.
  const applied = await appliedNames(db);
  if (allKnownIn(applied) && applied!.size === KNOWN.length) return [];
  const { error, results } = await migrator(db).migrateToLatest();
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

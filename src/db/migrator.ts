import {
  type Kysely,
  type Migration,
  type MigrationProvider,
  Migrator,
} from "kysely";
import { migrations } from "../../migrations/mod.ts";
import type { Database } from "./schema.ts";

class StaticMigrationProvider implements MigrationProvider {
  getMigrations(): Promise<Record<string, Migration>> {
    return Promise.resolve(migrations);
  }
}

function migrator(db: Kysely<Database>): Migrator {
  return new Migrator({ db, provider: new StaticMigrationProvider() });
}

/** Applies every pending migration; throws naming the one that failed. */
export async function migrateToLatest(db: Kysely<Database>): Promise<string[]> {
  // Loads the driver first (libSQL's is loaded on first use), so a URL its
  // client refuses fails with the client's message, not as a migration.
  await db.connection().execute(() => Promise.resolve());
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
  const list = await migrator(db).getMigrations();
  return list.every((m) => m.executedAt !== undefined);
}

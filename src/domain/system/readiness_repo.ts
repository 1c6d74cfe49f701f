import { sql } from "kysely";
import type { Db } from "../../db/schema.ts";
import { migrationsCurrent } from "../../db/migrator.ts";

/** Resolves when the database answers a query; throws when it does not. */
export async function pingDatabase(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** Whether every migration has been applied. */
export async function migrationsApplied(db: Db): Promise<boolean> {
  return await migrationsCurrent(db);
}

import type { Db } from "../../db/schema.ts";
import { migrationsApplied, pingDatabase } from "./readiness_repo.ts";

export type Readiness =
  | { ready: true }
  | { ready: false; reason: "database unreachable" | "migrations pending" };

/** Ready when the database answers and every migration has been applied. */
export async function checkReadiness(deps: { db: Db }): Promise<Readiness> {
  try {
    await pingDatabase(deps.db);
    if (!(await migrationsApplied(deps.db))) {
      return { ready: false, reason: "migrations pending" };
    }
    return { ready: true };
  } catch {
    return { ready: false, reason: "database unreachable" };
  }
}

import type { Db } from "../../db/schema.ts";
import type { ProgramParts } from "../../program_parts.ts";
import type { Draining } from "../../draining.ts";
import { migrationsApplied, pingDatabase } from "./readiness_repo.ts";

/** Databases whose migrations were seen current. */
const confirmed = new WeakSet<Db>();

export type Readiness =
  | { ready: true }
  | {
    ready: false;
    reason:
      | "database unreachable"
      | "migrations pending"
      | "a part of the program failed to load"
      | "shutting down";
    /** The database's own error, for the log (a 503's body never carries it). */
    detail?: string;
  };

/**
 * Ready when the process is not shutting down, every part of the program
 * loaded (see program_parts.ts), the database answers and every migration
 * has been applied.
 */
export async function checkReadiness(
  deps: { db: Db; parts: ProgramParts; draining: Draining },
): Promise<Readiness> {
  if (deps.draining.active) return { ready: false, reason: "shutting down" };
  if (deps.parts.broken) {
    return { ready: false, reason: "a part of the program failed to load" };
  }
  try {
    await pingDatabase(deps.db);
    // Once seen current the migrations stay so (a newer release's leave
    // this one's in place): then a probe costs one query, not two (each
    // balancer probes every second or two).
    if (!confirmed.has(deps.db)) {
      if (!(await migrationsApplied(deps.db))) {
        return { ready: false, reason: "migrations pending" };
      }
      confirmed.add(deps.db);
    }
    return { ready: true };
  } catch (err) {
    return {
      ready: false,
      reason: "database unreachable",
      detail: err instanceof Error ? err.message : String(err),
    };
  }
}

import type { Executor } from "../db/schema.ts";
import type { PlannedWrites } from "../db/planned_writes.ts";

/**
 * Where a plan's writes go. On a transaction (embedded SQLite: the group
 * commit's, holding the write lock from BEGIN) nothing can change between
 * the plan's reads and its writes, so they run at once on `reader`: the
 * statements, their order and their cost (executeRaw's direct path) of a
 * write in place. Otherwise (libSQL) on `writes.db`, recorded for the
 * unit's batch. A plan that writes here reads nothing it wrote.
 */
export function writerOf(reader: Executor, writes: PlannedWrites): Executor {
  return writes.guarded ? writes.db : reader;
}

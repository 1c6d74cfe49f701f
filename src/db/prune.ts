import { type RawBuilder, sql } from "kysely";
import type { Executor } from "./schema.ts";
import { toDbTime } from "./time.ts";

/** Rows per delete, so pruning never holds the write lock for long. */
const DELETE_BATCH = 1_000;

/** Deletes the rows of `table` matching `where`, 1,000 per statement (oldest rowids first); returns how many. */
export async function deleteInBatches(
  db: Executor,
  table: string,
  where: RawBuilder<unknown>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await sql`
      delete from ${sql.table(table)} where rowid in (
        select rowid from ${sql.table(table)} where ${where}
        limit ${DELETE_BATCH})`.execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    total += n;
    if (n < DELETE_BATCH) return total;
  }
}

/**
 * Deletes idempotency keys expired at `now`; returns how many. Kept here
 * until the idempotency repo lands (issue 7 moves that SQL there).
 */
export async function pruneIdempotencyKeys(
  db: Executor,
  now: Date,
): Promise<number> {
  return await deleteInBatches(
    db,
    "idempotency_keys",
    sql`expires_at < ${toDbTime(now)}`,
  );
}

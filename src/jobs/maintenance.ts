/** Handlers for the housekeeping jobs that cron enqueues: lease rescue and pruning. */
import { type RawBuilder, sql } from "kysely";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/schema.ts";
import { addMs, toDbTime } from "../db/time.ts";
import { pruneFinished, rescueExpiredLeases } from "./queue.ts";
import type { JobHandler } from "./worker_pool.ts";

/** Finished jobs and processed inbound payloads are kept this long. */
export const RETENTION_MS = 7 * 24 * 60 * 60 * 1_000;

const DELETE_BATCH = 1_000;

export interface MaintenanceDeps {
  db: Db;
  clock: Clock;
}

export interface PruneResult {
  jobs: number;
  idempotencyKeys: number;
  inboundPayloads: number;
}

/** Deletes in batches so a large backlog never holds the write lock for long. */
async function deleteInBatches(
  db: Db,
  table: "idempotency_keys" | "inbound_payloads",
  where: RawBuilder<unknown>,
): Promise<number> {
  let total = 0;
  for (;;) {
    const r = await sql`
      delete from ${sql.table(table)} where rowid in (
        select rowid from ${
      sql.table(table)
    } where ${where} limit ${DELETE_BATCH})`
      .execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    total += n;
    if (n < DELETE_BATCH) return total;
  }
}

/** Deletes finished jobs and processed inbound payloads past retention, and expired idempotency keys. */
export async function pruneAll(db: Db, now: Date): Promise<PruneResult> {
  const at = toDbTime(now);
  const cutoff = toDbTime(addMs(now, -RETENTION_MS));
  const jobs = await pruneFinished(db, addMs(now, -RETENTION_MS));
  const idempotencyKeys = await deleteInBatches(
    db,
    "idempotency_keys",
    sql`expires_at < ${at}`,
  );
  // processed_at >= received_at, so the received_at term only narrows the scan to its index.
  const inboundPayloads = await deleteInBatches(
    db,
    "inbound_payloads",
    sql`received_at < ${cutoff} and processed_at is not null and processed_at < ${cutoff}`,
  );
  return { jobs, idempotencyKeys, inboundPayloads };
}

/** Returns the handlers for "jobs.rescue" and "jobs.prune". */
export function maintenanceHandlers(
  deps: MaintenanceDeps,
): Record<string, JobHandler> {
  return {
    "jobs.rescue": async (_payload, ctx) => {
      const rescued = await rescueExpiredLeases(deps.db, deps.clock.now());
      if (rescued > 0) {
        ctx.log.warn("Rescued jobs with expired leases", { rescued });
      }
    },
    "jobs.prune": async (_payload, ctx) => {
      const pruned = await pruneAll(deps.db, deps.clock.now());
      ctx.log.info("Pruned old rows", { ...pruned });
    },
  };
}

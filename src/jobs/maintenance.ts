/** Handlers for the housekeeping jobs that cron enqueues: lease rescue and pruning. */
import { pruneIdempotencyKeys } from "../db/prune.ts";
import type { Clock } from "../clock.ts";
import type { Db } from "../db/schema.ts";
import { addMs, toDbTime } from "../db/time.ts";
import { pruneFinished, rescueExpiredLeases } from "./queue.ts";
import { pruneEvents } from "../domain/events/event_repo.ts";
import { pruneDeliveries } from "../domain/webhooks/delivery_repo.ts";
import { pruneInboundPayloads } from "../domain/inbound/inbound_payload_repo.ts";
import type { JobHandler } from "./worker_pool.ts";

/** Finished jobs and processed inbound payloads are kept this long. */
export const RETENTION_MS = 7 * 24 * 60 * 60 * 1_000;

export interface MaintenanceDeps {
  db: Db;
  clock: Clock;
  /** Webhook delivery log rows and delivered events are kept this many days. */
  retentionDays: number;
}

export interface PruneResult {
  jobs: number;
  idempotencyKeys: number;
  inboundPayloads: number;
  webhookDeliveries: number;
  events: number;
}

const DAY_MS = 24 * 60 * 60 * 1_000;

/**
 * Deletes finished jobs and processed inbound payloads past retention,
 * expired idempotency keys, and webhook log rows and delivered events older
 * than `retentionDays` (an event a pending delivery still needs is kept).
 */
export async function pruneAll(
  db: Db,
  now: Date,
  retentionDays: number,
): Promise<PruneResult> {
  const cutoff = toDbTime(addMs(now, -RETENTION_MS));
  const jobs = await pruneFinished(db, addMs(now, -RETENTION_MS));
  const idempotencyKeys = await pruneIdempotencyKeys(db, now);
  const inboundPayloads = await pruneInboundPayloads(db, cutoff);
  const webhookCutoff = toDbTime(addMs(now, -retentionDays * DAY_MS));
  const webhookDeliveries = await pruneDeliveries(db, webhookCutoff);
  const events = await pruneEvents(db, webhookCutoff);
  return { jobs, idempotencyKeys, inboundPayloads, webhookDeliveries, events };
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
      const pruned = await pruneAll(
        deps.db,
        deps.clock.now(),
        deps.retentionDays,
      );
      ctx.log.info("Pruned old rows", { ...pruned });
    },
  };
}

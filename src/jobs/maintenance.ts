/** Housekeeping that cron enqueues (jobs.prune; handlers in jobs/handlers/). */
import { pruneIdempotencyKeys } from "../db/prune.ts";
import type { Db } from "../db/schema.ts";
import { addMs, toDbTime } from "../db/time.ts";
import { pruneFinished } from "./queue.ts";
import { pruneEvents } from "../domain/events/event_repo.ts";
import { pruneDeliveries } from "../domain/webhooks/delivery_repo.ts";
import { pruneInboundPayloads } from "../domain/inbound/inbound_payload_repo.ts";

/** Finished jobs and processed inbound payloads are kept this long. */
export const RETENTION_MS = 7 * 24 * 60 * 60 * 1_000;

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

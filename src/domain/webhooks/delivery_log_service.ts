import type { Db, WebhookDeliveriesTable } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { toDbTime } from "../../db/time.ts";
import { enqueue, PRIORITY } from "../../jobs/queue.ts";
import { type CursorPage, decodeCursor, toCursorPage } from "../pagination.ts";
import { findEventData } from "../events/event_repo.ts";
import {
  type DeliveryStatus,
  type DeliveryView,
  pendingRow,
  toDeliveryView,
} from "./delivery.ts";
import {
  findDelivery,
  insertDeliveries,
  listDeliveryRows,
} from "./delivery_repo.ts";
import { envelopeText, payloadHash, testDataText } from "./envelope.ts";
import { deliveryJob } from "./fanout_service.ts";
import { getWebhook } from "./webhook_service.ts";

export interface LogDeps {
  db: Db;
  clock: Clock;
  /** A queued attempt's row and job are one atomic unit (GroupCommit.runPlanned). */
  commits: Pick<GroupCommit, "runPlanned">;
}

/**
 * Inserts a new one-attempt chain with its job (ahead of queued event
 * deliveries), together: two inserts of new rows that read nothing, so one
 * write batch on libSQL needs no guard.
 */
async function queueAttempt(deps: LogDeps, row: WebhookDeliveriesTable) {
  await deps.commits.runPlanned(async (_db, writes) => {
    await insertDeliveries(writes.db, [row]);
    await enqueue(
      writes.db,
      deliveryJob(row, { priority: PRIORITY.webhookManual }),
      deps.clock.now(),
    );
    return () => undefined;
  });
}

/**
 * Queues a synthetic `message.received` to the subscription (even when it is
 * disabled: it tests the URL and the signature). It is logged, sent once and
 * never touches the delivery counters. Returns the log row and the exact
 * envelope that is sent.
 */
export async function testWebhook(
  deps: LogDeps,
  ref: { accountId: string; id: string },
): Promise<{ delivery: DeliveryView; samplePayload: unknown }> {
  const webhook = await getWebhook(deps, ref);
  const now = deps.clock.now();
  const at = toDbTime(now);
  const eventId = newId(now.getTime());
  const dataText = testDataText(eventId);
  const row = pendingRow({
    id: newId(now.getTime()),
    account_id: ref.accountId,
    webhook_id: webhook.id,
    event_id: eventId,
    event: "message.received",
    kind: "test",
    payload_hash: payloadHash(dataText),
    created_at: at,
  });
  await queueAttempt(deps, row);
  // A test attempt carries its creation time as deliveredAt, so this is byte for byte what is sent.
  const envelope = envelopeText({
    event: row.event,
    eventId,
    webhookId: webhook.id,
    deliveredAt: at,
    attempt: 1,
    dataText,
  });
  return { delivery: toDeliveryView(row), samplePayload: JSON.parse(envelope) };
}

/**
 * Re-queues the event of any log row of the subscription as a new delivery
 * (kind `replay`, same event id) after checking that the data rebuilt today is
 * the data first sent (its hash); never sends altered or lost data.
 */
export async function replayDelivery(
  deps: LogDeps,
  ref: { accountId: string; id: string; deliveryId: string },
): Promise<DeliveryView> {
  const webhook = await getWebhook(deps, ref);
  const original = await findDelivery(deps.db, {
    accountId: ref.accountId,
    webhookId: webhook.id,
    id: ref.deliveryId,
  });
  if (!original) {
    throw new AppError(
      "DELIVERY_NOT_FOUND",
      `Cannot find delivery "${ref.deliveryId}" of webhook "${webhook.id}"`,
    );
  }
  if (!webhook.enabled) {
    throw new AppError(
      "WEBHOOK_DISABLED",
      `Cannot replay delivery "${original.id}": webhook "${webhook.id}" is disabled; enable it with PATCH {"enabled": true} first`,
    );
  }
  const dataText = await findEventData(deps.db, original.event_id) ??
    testDataText(original.event_id);
  if (payloadHash(dataText) !== original.payload_hash) {
    throw new AppError(
      "EVENT_EXPIRED",
      `Cannot replay delivery "${original.id}": the data of event "${original.event_id}" is no longer kept`,
    );
  }
  const now = deps.clock.now();
  const row = pendingRow({
    id: newId(now.getTime()),
    account_id: ref.accountId,
    webhook_id: webhook.id,
    event_id: original.event_id,
    event: original.event,
    kind: "replay",
    payload_hash: original.payload_hash,
    created_at: toDbTime(now),
  });
  await queueAttempt(deps, row);
  return toDeliveryView(row);
}

export interface DeliveryQuery {
  accountId: string;
  id: string;
  status: DeliveryStatus | "all";
  event?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  cursor?: string | undefined;
  limit: number;
}

/** One page of the subscription's delivery log, newest first. */
export async function listDeliveries(
  deps: { db: Db },
  q: DeliveryQuery,
): Promise<CursorPage<DeliveryView>> {
  const webhook = await getWebhook(deps, q);
  const rows = await listDeliveryRows(deps.db, {
    accountId: q.accountId,
    webhookId: webhook.id,
    status: q.status === "all" ? undefined : q.status,
    event: q.event,
    since: q.since,
    until: q.until,
    after: q.cursor ? decodeCursor(q.cursor) : undefined,
    limit: q.limit,
  });
  const page = toCursorPage(rows, q.limit, (r) => ({
    at: r.created_at,
    id: r.id,
  }));
  return { ...page, items: page.items.map(toDeliveryView) };
}

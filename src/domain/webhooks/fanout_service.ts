import type { Executor, WebhookDeliveriesTable } from "../../db/schema.ts";
import { fromJson } from "../../db/json.ts";
import { newId } from "../../ids.ts";
import {
  type EnqueueInput,
  enqueueManyCompiled,
  PRIORITY,
} from "../../jobs/queue.ts";
import { DELIVER_JOB, pendingRow } from "./delivery.ts";
import { insertDeliveries, pendingContactCreated } from "./delivery_repo.ts";
import { payloadHash } from "./envelope.ts";
import { subscribersOf } from "./webhook_repo.ts";

export { DELIVER_JOB } from "./delivery.ts";

/**
 * When an attempt that waits for its contact's contact.created first runs:
 * the end of that chain wakes it at once (runNow), so it is not claimed only
 * to be put back while the first is still on its way; this is the backstop.
 */
export const WAITING_BACKSTOP_MS = 30_000;

/**
 * The kinds delivered after their contact's contact.created (the spec's
 * events rule 3); the rest never wait, so a status change costs no lookup.
 */
const WAITS_FOR_CONTACT = new Set(["message.received", "conversation.created"]);

export interface FannedEvent {
  eventId: string;
  accountId: string;
  type: string;
  dataText: string;
  /** The contact the event is about (see subjectOf). */
  subjectId: string | null;
  createdAt: string;
}

/** The job of one pending attempt, grouped by subscription so one slow endpoint keeps to its share. */
export function deliveryJob(
  row: Pick<WebhookDeliveriesTable, "id" | "webhook_id">,
  options: { runAt?: Date; priority?: number } = {},
): EnqueueInput<typeof DELIVER_JOB> {
  // Attempts and unique key: JOB_KINDS["webhook.deliver"].
  return {
    kind: DELIVER_JOB,
    payload: { deliveryId: row.id },
    priority: options.priority ?? PRIORITY.webhook,
    groupKey: row.webhook_id,
    ...(options.runAt ? { runAt: options.runAt } : {}),
  };
}

/**
 * Creates one delivery per subscription of the account that wants this event
 * kind, in the caller's transaction (the event's own), with the job of its
 * first attempt; a disabled subscription gets a `skipped` row instead (it can
 * be replayed). A message.received or conversation.created whose contact's
 * contact.created is still on its way to a subscription waits for it there;
 * no other kind waits.
 * Returns how many deliveries it queued.
 */
export async function fanOut(
  trx: Executor,
  event: FannedEvent,
  now: Date,
): Promise<number> {
  const subscribers = (await subscribersOf(trx, event.accountId)).filter((s) =>
    fromJson<string[]>(s.events, []).includes(event.type)
  );
  if (subscribers.length === 0) return 0;
  const enabled = subscribers.filter((s) => s.enabled === 1).map((s) => s.id);
  const waits = WAITS_FOR_CONTACT.has(event.type) && event.subjectId
    ? await pendingContactCreated(trx, {
      webhookIds: enabled,
      subjectId: event.subjectId,
    })
    : new Map<string, string>();
  const hash = payloadHash(event.dataText);
  const rows = subscribers.map((s) => {
    const on = s.enabled === 1;
    return pendingRow({
      id: newId(now.getTime()),
      account_id: event.accountId,
      webhook_id: s.id,
      event_id: event.eventId,
      event: event.type,
      kind: "event",
      payload_hash: hash,
      created_at: event.createdAt,
      subject_id: event.subjectId,
      after_root_id: on ? waits.get(s.id) ?? null : null,
      ...(on ? {} : {
        status: "skipped",
        error_message:
          "Skipped: the subscription was disabled when the event occurred",
        next_attempt_at: null,
      }),
    });
  });
  await insertDeliveries(trx, rows);
  const pending = rows.filter((r) => r.status === "pending");
  const backstop = new Date(now.getTime() + WAITING_BACKSTOP_MS);
  // Written once per row count; the JobInsertHook still wakes the webhook pool.
  await enqueueManyCompiled(
    trx,
    pending.map((r) =>
      deliveryJob(r, r.after_root_id ? { runAt: backstop } : {})
    ),
    now,
    { wake: true },
  );
  return pending.length;
}

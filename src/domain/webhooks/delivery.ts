/** Delivery log rows: one per attempt, as the API shows them. */
import { JOB_KINDS, type JobKind } from "../../jobs/kinds.ts";
import type { WebhookDeliveriesTable } from "../../db/schema.ts";

export const DELIVERY_STATUSES = [
  "pending",
  "success",
  "failed",
  "skipped",
] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

export const DELIVERY_KINDS = ["event", "test", "replay"] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** The job that makes one attempt; its payload is the delivery row's id. */
export const DELIVER_JOB = "webhook.deliver" satisfies JobKind;

/** The unique key of the job of one attempt row (JOB_KINDS gives it). */
export function deliveryJobKey(deliveryId: string): string {
  return JOB_KINDS[DELIVER_JOB].uniqueKey!({ deliveryId });
}

/** Bytes of the receiver's response body kept on an attempt. */
export const RESPONSE_EXCERPT_BYTES = 1024;

export interface DeliveryView {
  id: string;
  webhookId: string;
  event: string;
  eventId: string;
  kind: DeliveryKind;
  attempt: number;
  status: DeliveryStatus;
  success: boolean;
  statusCode: number | null;
  /** 2xx, 3xx, 4xx, 5xx, timeout, blocked or error; null until attempted. */
  outcome: string | null;
  errorMessage: string | null;
  durationMs: number | null;
  payloadHash: string;
  responseBody: string | null;
  redirectLocation: string | null;
  redirectStatusCode: number | null;
  createdAt: string;
  attemptedAt: string | null;
  nextAttemptAt: string | null;
}

export function toDeliveryView(r: WebhookDeliveriesTable): DeliveryView {
  return {
    id: r.id,
    webhookId: r.webhook_id,
    event: r.event,
    eventId: r.event_id,
    kind: r.kind as DeliveryKind,
    attempt: r.attempt,
    status: r.status as DeliveryStatus,
    success: r.status === "success",
    statusCode: r.status_code,
    outcome: r.outcome,
    errorMessage: r.error_message,
    durationMs: r.duration_ms,
    payloadHash: r.payload_hash,
    responseBody: r.response_excerpt,
    redirectLocation: r.redirect_location,
    redirectStatusCode: r.redirect_status_code,
    createdAt: r.created_at,
    attemptedAt: r.attempted_at,
    nextAttemptAt: r.next_attempt_at,
  };
}

/** The contact an event is about: contact.created waits for no one, the rest wait for it. */
export function subjectOf(type: string, data: unknown): string | null {
  if (typeof data !== "object" || data === null) return null;
  const d = data as { id?: unknown; contactId?: unknown };
  const id = type === "contact.created" ? d.id : d.contactId;
  return typeof id === "string" ? id : null;
}

/** The result columns of an attempt not made (yet). */
export const NOT_ATTEMPTED = {
  status_code: null,
  outcome: null,
  error_message: null,
  duration_ms: null,
  response_excerpt: null,
  redirect_location: null,
  redirect_status_code: null,
  attempted_at: null,
} as const;

/**
 * A new pending attempt row: the first of its chain (root_id = id, attempt 1,
 * due at created_at) unless the fields say otherwise.
 */
export function pendingRow(
  fields:
    & Pick<
      WebhookDeliveriesTable,
      | "id"
      | "account_id"
      | "webhook_id"
      | "event_id"
      | "event"
      | "kind"
      | "payload_hash"
      | "created_at"
    >
    & Partial<WebhookDeliveriesTable>,
): WebhookDeliveriesTable {
  return {
    root_id: fields.id,
    subject_id: null,
    after_root_id: null,
    attempt: 1,
    status: "pending",
    first_attempt_at: null,
    next_attempt_at: fields.created_at,
    ...NOT_ATTEMPTED,
    ...fields,
  };
}

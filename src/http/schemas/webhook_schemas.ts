import { z } from "@hono/zod-openapi";
import {
  headerProblems,
  maskedHeaders,
  MAX_DESCRIPTION_LENGTH,
  MAX_URL_LENGTH,
  type Webhook,
  WEBHOOK_EVENTS,
} from "../../domain/webhooks/webhook.ts";
import {
  DELIVERY_KINDS,
  DELIVERY_STATUSES,
} from "../../domain/webhooks/delivery.ts";
import { CursorQuery } from "../openapi.ts";

const Timestamp = z.iso.datetime().openapi({
  example: "2026-11-20T12:00:00.000Z",
});

export const WebhookEventSchema = z.enum(WEBHOOK_EVENTS);

/** Custom headers, with every rule of the spec checked at the edge (each problem names its header). */
const CustomHeaders = z.record(z.string(), z.string()).superRefine(
  (headers, ctx) => {
    for (const problem of headerProblems(headers)) {
      const name = problem.path.slice("headers.".length);
      ctx.addIssue({
        code: "custom",
        path: problem.path === "headers" ? [] : [name],
        message: problem.message,
      });
    }
  },
).openapi({
  description:
    "Sent on every delivery (retries and tests too). At most 10; names are RFC 7230 tokens up to 256 characters, unique case-insensitively; values up to 1024 characters without line breaks. Content-Type, Content-Length, Host, User-Agent, connection headers and any name starting with X-Service- (any case) cannot be set.",
  example: { "X-Api-Key": "my-receiver-key" },
});

const Events = z.array(WebhookEventSchema).min(1, {
  message: "must name at least one event",
}).openapi({ description: "Event kinds to deliver (a non-empty subset)" });

const Url = z.string().min(1).max(MAX_URL_LENGTH).openapi({
  description:
    "https URL of the receiver (http only when WEBHOOK_ALLOW_HTTP=true); private, loopback, link-local and metadata addresses are refused",
  example: "https://example.com/hooks/messaging",
});

const Description = z.string().max(MAX_DESCRIPTION_LENGTH);

export const CreateWebhookBody = z.strictObject({
  url: Url,
  events: Events,
  description: Description.nullable().optional(),
  enabled: z.boolean().optional().openapi({ description: "Default true" }),
  headers: CustomHeaders.nullable().optional(),
}).openapi("CreateWebhook");

export const UpdateWebhookBody = z.strictObject({
  url: Url.optional(),
  events: Events.optional(),
  description: Description.nullable().optional(),
  enabled: z.boolean().optional().openapi({
    description:
      "true clears an auto-disable and resets the failure counter; false disables",
  }),
  headers: CustomHeaders.nullable().optional().openapi({
    description:
      "Replaces the whole set; null or {} deletes them; omit to keep them",
  }),
}).refine((o) => Object.values(o).some((v) => v !== undefined), {
  message: "send at least one field to change",
}).openapi("UpdateWebhook");

export const WebhookSchema = z.object({
  id: z.uuid(),
  url: z.string(),
  events: z.array(WebhookEventSchema),
  description: z.string().nullable(),
  enabled: z.boolean(),
  headers: z.record(z.string(), z.string()).nullable().openapi({
    description: "Custom header names with masked values; null when none",
  }),
  lastDeliveryAt: Timestamp.nullable(),
  lastDeliveryStatus: z.enum(["success", "failed"]).nullable(),
  consecutiveFailures: z.number().int().min(0),
  disabledAt: Timestamp.nullable(),
  disabledReason: z.enum(["auto"]).nullable().openapi({
    description: '"auto" after 10 consecutive failures; null otherwise',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
}).openapi("Webhook");

export const WebhookWithSecretSchema = WebhookSchema.extend({
  secret: z.string().openapi({
    description:
      "HMAC-SHA256 key of X-Service-Signature; shown only here (creation and rotation)",
    example: "whsec_3x7Q...",
  }),
}).openapi("WebhookWithSecret");

export function toWebhookResponse(w: Webhook): z.infer<typeof WebhookSchema> {
  return {
    id: w.id,
    url: w.url,
    events: w.events,
    description: w.description,
    enabled: w.enabled,
    headers: maskedHeaders(w.headerNames),
    lastDeliveryAt: w.lastDeliveryAt,
    lastDeliveryStatus: w.lastDeliveryStatus,
    consecutiveFailures: w.consecutiveFailures,
    disabledAt: w.disabledAt,
    disabledReason: w.disabledReason,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

export const DeliverySchema = z.object({
  id: z.uuid().openapi({ description: "Usable as deliveryId for replay" }),
  webhookId: z.uuid(),
  event: WebhookEventSchema,
  eventId: z.uuid().openapi({
    description: "Same on every attempt and replay: the dedupe key",
  }),
  kind: z.enum(DELIVERY_KINDS),
  attempt: z.number().int().min(1),
  status: z.enum(DELIVERY_STATUSES),
  success: z.boolean(),
  statusCode: z.number().int().nullable(),
  outcome: z.enum(["2xx", "3xx", "4xx", "5xx", "timeout", "blocked", "error"])
    .nullable(),
  errorMessage: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  payloadHash: z.string().openapi({
    description: "SHA-256 of the event data (the payload itself is not kept)",
  }),
  responseBody: z.string().nullable().openapi({
    description: "First 1 KiB of the receiver's answer",
  }),
  redirectLocation: z.string().nullable(),
  redirectStatusCode: z.number().int().nullable(),
  createdAt: Timestamp,
  attemptedAt: Timestamp.nullable(),
  nextAttemptAt: Timestamp.nullable().openapi({
    description: "When this (pending) attempt or the retry after it runs",
  }),
}).openapi("WebhookDelivery");

/** An ISO 8601 instant, normalised to the stored form (UTC with ms) so it compares as text. */
const Instant = z.iso.datetime({ offset: true }).transform((v) =>
  new Date(v).toISOString()
);

export const DeliveryListQuery = CursorQuery.extend({
  status: z.enum(["all", ...DELIVERY_STATUSES]).default("all"),
  event: WebhookEventSchema.optional(),
  since: Instant.optional().openapi({ description: "createdAt >= since" }),
  until: Instant.optional().openapi({ description: "createdAt < until" }),
});

export const EnvelopeSchema = z.object({
  event: WebhookEventSchema,
  eventId: z.uuid(),
  webhookId: z.uuid(),
  deliveredAt: Timestamp,
  attempt: z.number().int().min(1),
  data: z.record(z.string(), z.unknown()),
}).openapi("WebhookEnvelope");

export const TestResultSchema = z.object({
  delivery: DeliverySchema,
  samplePayload: EnvelopeSchema,
});

export const DeletedSchema = z.object({
  id: z.uuid(),
  deleted: z.literal(true),
});

export const DeliveryParams = z.object({
  id: z.uuid({ message: "must be a UUID" }).openapi({
    param: { name: "id", in: "path" },
  }),
  deliveryId: z.uuid({ message: "must be a UUID" }).openapi({
    param: { name: "deliveryId", in: "path" },
  }),
});

export const EventListQuery = z.strictObject({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  type: z.string().max(200).optional().openapi({
    description: "One event kind, or several separated by commas",
  }),
});

export const FeedEventSchema = z.object({
  eventId: z.uuid(),
  type: WebhookEventSchema,
  createdAt: Timestamp,
  data: z.record(z.string(), z.unknown()).openapi({
    description: "The same shape as the webhook's data",
  }),
}).openapi("Event");

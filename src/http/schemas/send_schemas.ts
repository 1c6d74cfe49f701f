import { z } from "@hono/zod-openapi";
import { SendMessageBody } from "../../domain/messages/outbound_schema.ts";

/**
 * The domain builds SendMessageBody with plain zod, and zod gives a schema
 * the methods its prototype had when the schema was made: when a bundle
 * evaluates the domain before @hono/zod-openapi extends zod, the schema has
 * no .openapi() of its own, so the extension's method is called directly.
 */
export const SendMessageRequest: typeof SendMessageBody = z.ZodType.prototype
  .openapi.call(SendMessageBody, "SendMessageRequest");

export const AcceptedMessageSchema = z.object({
  id: z.uuid(),
  conversationId: z.uuid(),
  direction: z.literal("outbound"),
  type: z.string(),
  status: z.literal("queued"),
  waMessageId: z.null(),
  createdAt: z.iso.datetime(),
}).openapi("AcceptedMessage");

export const BatchRequest = z.strictObject({
  messages: z.array(z.unknown()).min(1, {
    message: "must hold 1 to 100 messages",
  }).max(100, { message: "must hold 1 to 100 messages" }).openapi({
    description:
      "1 to 100 items, each shaped like the POST /messages body with phoneNumberId optional",
  }),
  // Checked per item: a value that is not a channel id fails only the items
  // that fall back on it (INVALID_CHANNEL), never the whole batch.
  defaultPhoneNumberId: z.union([z.string().max(256), z.number()]).optional()
    .openapi({
      description:
        "Channel id (UUID) for items without their own phoneNumberId",
    }),
  respectOptOut: z.boolean().optional(),
}).openapi("BatchRequest");

const BatchItemBase = {
  index: z.number().int(),
  clientRef: z.string().nullable(),
};

export const BatchResultSchema = z.object({
  accepted: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
  items: z.array(z.discriminatedUnion("result", [
    z.object({
      ...BatchItemBase,
      result: z.literal("queued"),
      message: z.object({
        id: z.uuid(),
        status: z.literal("queued"),
        clientRef: z.string().nullable(),
        type: z.string(),
        waMessageId: z.null(),
        createdAt: z.iso.datetime(),
      }),
    }),
    z.object({
      ...BatchItemBase,
      result: z.literal("skipped"),
      reason: z.string(),
    }),
    z.object({
      ...BatchItemBase,
      result: z.literal("failed"),
      error: z.object({ code: z.string(), message: z.string() }),
    }),
  ])),
}).openapi("BatchResult");

export const ReadResultSchema = z.object({
  conversationId: z.uuid(),
  markedMessageId: z.uuid().nullable(),
  deliveredToMeta: z.boolean(),
}).openapi("ReadResult");

export const TypingRequest = z.strictObject({ status: z.enum(["on", "off"]) });

export const TypingResultSchema = z.object({
  conversationId: z.uuid(),
  status: z.enum(["on", "off"]),
  deliveredToMeta: z.boolean(),
  reason: z.enum([
    "no_phone_number",
    "no_inbound_to_anchor",
    "phone_not_found",
    "meta_rejected",
    "meta_unreachable",
    "typing_off_noop",
  ]).optional(),
}).openapi("TypingResult");

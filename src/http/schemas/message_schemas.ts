// The Message resource as GET endpoints return it. `content` depends on
// `type`, so Message is a union discriminated by `type`. Content objects other
// than text are returned as stored (the upstream-style object of that type),
// so they are open: documented fields are listed, others may appear.
import { z } from "@hono/zod-openapi";
import { MESSAGE_STATUSES } from "../../domain/messages/message.ts";

const opt = z.string().optional();

export const TextContentSchema = z.object({
  text: z.string(),
}).openapi("TextContent", {
  description: "Text message content (webhook payloads show it as { body })",
});

export const MediaContentSchema = z.looseObject({
  id: opt.openapi({ description: "Upstream media id" }),
  link: opt.openapi({ description: "Public URL the media was sent from" }),
  caption: opt,
  filename: opt.openapi({ description: "Documents only" }),
  mimeType: opt,
  mime_type: opt.openapi({ description: "Upstream spelling on inbound media" }),
  sha256: opt,
  voice: z.boolean().optional().openapi({ description: "Audio voice notes" }),
  animated: z.boolean().optional().openapi({ description: "Stickers" }),
}).openapi("MediaContent", {
  description:
    "image, video, audio, document and sticker; the stored file is at the message's mediaId",
});

export const LocationContentSchema = z.looseObject({
  latitude: z.number(),
  longitude: z.number(),
  name: opt,
  address: opt,
  url: opt,
}).openapi("LocationContent");

export const ContactsContentSchema = z.looseObject({
  contacts: z.array(z.looseObject({
    name: z.looseObject({ formatted_name: z.string() }).optional(),
    phones: z.array(z.looseObject({ phone: opt, wa_id: opt, type: opt }))
      .optional(),
    emails: z.array(z.looseObject({ email: opt, type: opt })).optional(),
  })),
}).openapi("ContactsContent", { description: "Shared contact cards" });

export const TemplateContentSchema = z.looseObject({
  name: z.string(),
  language: z.union([
    z.string(),
    z.looseObject({ code: z.string(), policy: opt }),
  ]).optional(),
  components: z.array(z.looseObject({ type: z.string() })).optional(),
}).openapi("TemplateContent");

export const InteractiveContentSchema = z.looseObject({
  type: z.string().openapi({
    description:
      "button, list, cta_url, flow (sent); button_reply, list_reply, nfm_reply (received)",
  }),
  header: z.looseObject({ type: z.string() }).optional(),
  body: z.looseObject({ text: z.string() }).optional(),
  footer: z.looseObject({ text: z.string() }).optional(),
  action: z.looseObject({}).optional(),
  button_reply: z.looseObject({ id: z.string(), title: z.string() })
    .optional(),
  list_reply: z.looseObject({ id: z.string(), title: z.string() }).optional(),
  nfm_reply: z.looseObject({ name: opt, body: opt, response_json: opt })
    .optional(),
}).openapi("InteractiveContent");

export const ButtonContentSchema = z.looseObject({
  payload: opt,
  text: opt,
}).openapi("ButtonContent", {
  description: "A tap on a template's quick-reply button (received)",
});

export const ReactionContentSchema = z.looseObject({
  message_id: opt.openapi({ description: "waMessageId reacted to" }),
  emoji: opt.openapi({ description: "Empty or absent: reaction removed" }),
}).openapi("ReactionContent");

export const OtherContentSchema = z.looseObject({}).openapi("OtherContent", {
  description:
    "Kinds the service stores without interpreting (unsupported, order, system, ...), as received",
});

const MessageBase = z.object({
  id: z.uuid(),
  conversationId: z.uuid(),
  contactId: z.uuid(),
  phoneNumberId: z.uuid().nullable().openapi({ description: "Channel id" }),
  direction: z.enum(["inbound", "outbound"]),
  status: z.enum(MESSAGE_STATUSES).openapi({
    description: "Inbound messages show delivered",
  }),
  waMessageId: z.string().nullable(),
  errorCode: z.string().nullable(),
  errorMessage: z.string().nullable(),
  origin: z.string().openapi({ example: "external_api" }),
  sentByAi: z.boolean(),
  campaignId: z.string().nullable(),
  clientRef: z.string().nullable(),
  mediaId: z.uuid().nullable(),
  mediaKey: z.string().nullable(),
  agentId: z.uuid().nullable().openapi({
    description:
      "The agent that sent it (user token or panel session; origin panel), null otherwise",
  }),
  context: z.object({
    waMessageId: z.string(),
    messageId: z.uuid().nullable().openapi({
      description: "Our id of the quoted message, null when we do not have it",
    }),
  }).nullable().openapi({ description: "The message a reply quotes" }),
  forwarded: z.boolean(),
  frequentlyForwarded: z.boolean(),
  referral: z.object({
    sourceUrl: z.string().nullable(),
    sourceId: z.string().nullable(),
    sourceType: z.string().nullable().openapi({ example: "ad" }),
    headline: z.string().nullable(),
    body: z.string().nullable(),
    mediaType: z.string().nullable(),
    ctwaClid: z.string().nullable().openapi({
      description: "Click-to-WhatsApp click id, for ad attribution",
    }),
  }).nullable().openapi({
    description: "The click-to-WhatsApp ad or post the customer came from",
  }),
  edits: z.array(z.object({
    previousContent: z.record(z.string(), z.unknown()),
    editedAt: z.iso.datetime(),
  })).openapi({
    description:
      "Earlier versions of a message the customer edited, oldest first",
  }),
  deletedAt: z.iso.datetime().nullable().openapi({
    description: "When the customer deleted the message for everyone",
  }),
  mediaError: z.string().nullable().openapi({
    description:
      "Why its media could not be downloaded from the upstream, for good (mediaId stays null); null while it downloads or once stored",
  }),
  createdAt: z.iso.datetime(),
});

function variant<T extends z.ZodType>(
  types: readonly [string, ...string[]],
  content: T,
) {
  return MessageBase.extend({ type: z.enum(types), content });
}

export const MessageSchema = z.discriminatedUnion("type", [
  variant(["text"], TextContentSchema),
  variant(
    ["image", "video", "audio", "document", "sticker"],
    MediaContentSchema,
  ),
  variant(["location"], LocationContentSchema),
  variant(["contacts"], ContactsContentSchema),
  variant(["template"], TemplateContentSchema),
  variant(["interactive"], InteractiveContentSchema),
  variant(["button"], ButtonContentSchema),
  variant(["reaction"], ReactionContentSchema),
  variant(
    ["order", "system", "request_welcome", "unknown", "unsupported"],
    OtherContentSchema,
  ),
]).openapi("Message");

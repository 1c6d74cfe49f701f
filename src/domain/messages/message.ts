/** Message types and the one mapping from a stored row to the API's Message. */

import type { MessagesTable } from "../../db/schema.ts";
import { detailsView, type Referral } from "./message_details.ts";

export type MessageDirection = "inbound" | "outbound";
export const MESSAGE_STATUSES = [
  "queued",
  "sent",
  "delivered",
  "read",
  "failed",
] as const;
export type MessageStatus = (typeof MESSAGE_STATUSES)[number];

/** Status values the `messages.status` column holds: the API's set plus `received` (inbound). */
export type StoredMessageStatus = MessageStatus | "received";

/** Every message type a stored row may carry (sent, or received from upstream). */
export const MESSAGE_TYPES = [
  "text",
  "image",
  "video",
  "audio",
  "document",
  "sticker",
  "location",
  "contacts",
  "interactive",
  "button",
  "template",
  "reaction",
  "order",
  "system",
  "request_welcome",
  "unknown",
  "unsupported",
] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];

/** `content` of a text message on GET (stored as `{ body }`, as in webhook payloads). */
export interface TextContentView {
  text: string;
}

export type MessageContentView = TextContentView | Record<string, unknown>;

export interface MessageView {
  id: string;
  conversationId: string;
  contactId: string;
  /** The channel id, or null when the channel was deleted. */
  phoneNumberId: string | null;
  direction: MessageDirection;
  type: MessageType;
  content: MessageContentView;
  status: MessageStatus;
  waMessageId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  origin: string;
  sentByAi: boolean;
  campaignId: string | null;
  clientRef: string | null;
  mediaId: string | null;
  mediaKey: string | null;
  /** The quoted message of a reply; messageId is ours when we have it. */
  context: { waMessageId: string; messageId: string | null } | null;
  forwarded: boolean;
  frequentlyForwarded: boolean;
  /** The click-to-WhatsApp ad the customer came from. */
  referral: Referral | null;
  /** Earlier versions of a message the customer edited, oldest first. */
  edits: { previousContent: object; editedAt: string }[];
  /** When the customer deleted it for everyone; the content is kept. */
  deletedAt: string | null;
  createdAt: string;
}

/** The columns of a `messages` row the view reads. */
export type MessageRow = Pick<
  MessagesTable,
  | "id"
  | "conversation_id"
  | "contact_id"
  | "channel_id"
  | "direction"
  | "type"
  | "content"
  | "status"
  | "wa_message_id"
  | "error_code"
  | "error_message"
  | "origin"
  | "sent_by_ai"
  | "campaign_id"
  | "client_ref"
  | "media_id"
  | "media_key"
  | "context_wa_message_id"
  | "details"
  | "created_at"
>;

/**
 * The API status of a stored status. Inbound rows are stored as `received`,
 * which is not in the API's set (queued, sent, delivered, read, failed):
 * they show as `delivered`, since the message did reach the business.
 */
export function toMessageStatus(stored: string): MessageStatus {
  return (stored === "received" ? "delivered" : stored) as MessageStatus;
}

/** A stored type outside the documented set shows as `unsupported` (content kept as stored). */
export function toMessageType(stored: string): MessageType {
  return (MESSAGE_TYPES as readonly string[]).includes(stored)
    ? stored as MessageType
    : "unsupported";
}

function parseContent(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/**
 * The `content` object of a message on GET: text shows as `{ text }` (it is
 * stored as `{ body }`); a contacts message stored as a bare array of cards
 * shows as `{ contacts: [...] }`; every other type shows as stored.
 */
export function toContentView(
  type: string,
  stored: string,
): MessageContentView {
  const value = parseContent(stored);
  if (type === "contacts" && Array.isArray(value)) return { contacts: value };
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return type === "text" ? { text: "" } : {};
  }
  const object = value as Record<string, unknown>;
  if (type === "text") {
    const text = typeof object.body === "string"
      ? object.body
      : typeof object.text === "string"
      ? object.text
      : "";
    return { text };
  }
  return object;
}

/** The API's Message for a stored row (GET /conversations/:id/messages, GET /messages/:id). */
export function toMessageView(row: MessageRow): MessageView {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    contactId: row.contact_id,
    phoneNumberId: row.channel_id,
    direction: row.direction as MessageDirection,
    type: toMessageType(row.type),
    content: toContentView(row.type, row.content),
    status: toMessageStatus(row.status),
    waMessageId: row.wa_message_id,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    origin: row.origin,
    sentByAi: row.sent_by_ai === 1,
    campaignId: row.campaign_id,
    clientRef: row.client_ref,
    mediaId: row.media_id,
    mediaKey: row.media_key,
    ...detailsView(
      row.context_wa_message_id,
      row.details,
      (stored) => toContentView(row.type, stored),
    ),
    createdAt: row.created_at,
  };
}

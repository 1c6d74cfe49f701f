/** Message types and the one mapping from a stored message to the API's Message. */

import {
  detailsView,
  type MessageDetails,
  type Referral,
} from "./message_details.ts";

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

/** The API's Message: the stored fields it shows as they are, and the shaped ones. */
export interface MessageView extends
  Pick<
    Message,
    | "id"
    | "conversationId"
    | "contactId"
    | "direction"
    | "waMessageId"
    | "errorCode"
    | "errorMessage"
    | "origin"
    | "sentByAi"
    | "campaignId"
    | "clientRef"
    | "mediaId"
    | "mediaKey"
    | "agentId"
    | "createdAt"
  > {
  /** The channel id, or null when the channel was deleted. */
  phoneNumberId: string | null;
  type: MessageType;
  content: MessageContentView;
  status: MessageStatus;
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
  /** Why its media could not be downloaded, for good (mediaId stays null); null otherwise. */
  mediaError: string | null;
}

/** The queue lane of an outbound message: live sends go before batch ones. */
export type MessageLane = "live" | "batch";

/**
 * A stored message in domain terms, one per `messages` row; message_repo.ts
 * alone maps it to its row and back.
 */
export interface Message {
  id: string;
  accountId: string;
  conversationId: string;
  contactId: string;
  /** Null once the channel is deleted. */
  channelId: string | null;
  direction: MessageDirection;
  /** As stored; the API shows a type outside MESSAGE_TYPES as `unsupported`. */
  type: string;
  /** The stored form (text as `{ body }`, as in webhook payloads). */
  content: unknown;
  status: StoredMessageStatus;
  waMessageId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  origin: string;
  sentByAi: boolean;
  campaignId: string | null;
  clientRef: string | null;
  mediaId: string | null;
  mediaKey: string | null;
  lane: MessageLane;
  /** The upstream id of the message a reply quotes. */
  contextWaMessageId: string | null;
  /** When upstream says the message was sent (received messages and echoes). */
  upstreamAt: string | null;
  details: MessageDetails;
  /** The agent that sent it (user token or panel session); null for API keys and upstream. */
  agentId: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The fields a message from upstream (a customer's, or an echo) leaves at their defaults. */
export const UPSTREAM_MESSAGE_DEFAULTS = {
  sentByAi: false,
  campaignId: null,
  clientRef: null,
  mediaId: null,
  mediaKey: null,
  lane: "live",
  agentId: null,
} as const;

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

/**
 * The `content` object of a message on GET: text shows as `{ text }` (it is
 * stored as `{ body }`); a contacts message stored as a bare array of cards
 * shows as `{ contacts: [...] }`; every other type shows as stored.
 */
export function toContentView(
  type: string,
  value: unknown,
): MessageContentView {
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

/** The API's Message for a stored message (GET /conversations/:id/messages, GET /messages/:id). */
export function toMessageView(message: Message): MessageView {
  return {
    id: message.id,
    conversationId: message.conversationId,
    contactId: message.contactId,
    phoneNumberId: message.channelId,
    direction: message.direction,
    type: toMessageType(message.type),
    content: toContentView(message.type, message.content),
    status: toMessageStatus(message.status),
    waMessageId: message.waMessageId,
    errorCode: message.errorCode,
    errorMessage: message.errorMessage,
    origin: message.origin,
    sentByAi: message.sentByAi,
    campaignId: message.campaignId,
    clientRef: message.clientRef,
    mediaId: message.mediaId,
    mediaKey: message.mediaKey,
    agentId: message.agentId,
    ...detailsView(
      message.contextWaMessageId,
      message.details,
      (stored) => toContentView(message.type, stored),
    ),
    createdAt: message.createdAt,
  };
}

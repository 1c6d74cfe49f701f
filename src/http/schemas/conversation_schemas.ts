import { z } from "@hono/zod-openapi";
import {
  type Conversation,
  CONVERSATION_STATUSES,
} from "../../domain/conversations/conversation.ts";
import { MESSAGE_STATUSES } from "../../domain/messages/message.ts";
import { CursorQuery } from "../openapi.ts";

const Timestamp = z.iso.datetime().openapi({
  example: "2026-11-20T12:00:00.000Z",
});

export const ConversationStatusSchema = z.enum(CONVERSATION_STATUSES);

export const ConversationSchema = z.object({
  id: z.uuid(),
  contactId: z.uuid(),
  phoneNumberId: z.uuid().nullable().openapi({
    description: "Channel id; null when the channel was removed",
  }),
  status: ConversationStatusSchema,
  assignedTo: z.string().nullable().openapi({
    description: "Id of the assigned agent, or null",
  }),
  lastMessageAt: Timestamp.nullable(),
  lastMessagePreview: z.string().nullable(),
  lastMessageDirection: z.enum(["inbound", "outbound"]).nullable(),
  lastMessageStatus: z.enum(MESSAGE_STATUSES).nullable().openapi({
    description: "Status of the last message; inbound messages show delivered",
  }),
  serviceWindowExpiresAt: Timestamp.nullable().openapi({
    description:
      "End of the 24 h free-text window (last inbound message + 24 h); null before any inbound message",
  }),
  unreadCount: z.number().int().min(0),
  createdAt: Timestamp,
  contact: z.object({
    id: z.uuid(),
    phoneNumber: z.string().nullable().openapi({
      example: "+5491122334455",
      description: "Null for a customer known only by a BSUID",
    }),
    userId: z.string().nullable().openapi({
      description: "Business-scoped user id (BSUID), null when unknown",
    }),
    username: z.string().nullable(),
    name: z.string().nullable(),
  }),
  referral: z.looseObject({}).nullable().openapi({
    description:
      "The click-to-WhatsApp ad that last brought the customer (same shape as Message.referral), kept for attribution",
  }),
}).openapi("Conversation");

/** The domain Conversation is already the wire shape; this only pins the field list. */
export function toConversationResponse(
  c: Conversation,
): z.infer<typeof ConversationSchema> {
  return {
    id: c.id,
    contactId: c.contactId,
    phoneNumberId: c.phoneNumberId,
    status: c.status,
    assignedTo: c.assignedTo,
    lastMessageAt: c.lastMessageAt,
    lastMessagePreview: c.lastMessagePreview,
    lastMessageDirection: c.lastMessageDirection,
    lastMessageStatus: c.lastMessageStatus,
    serviceWindowExpiresAt: c.serviceWindowExpiresAt,
    unreadCount: c.unreadCount,
    createdAt: c.createdAt,
    contact: {
      id: c.contact.id,
      phoneNumber: c.contact.phoneNumber,
      userId: c.contact.userId,
      username: c.contact.username,
      name: c.contact.name,
    },
    referral: c.referral ? { ...c.referral } : null,
  };
}

export const ListConversationsQuery = CursorQuery.extend({
  status: ConversationStatusSchema.optional(),
  search: z.string().trim().min(1).max(100).optional().openapi({
    description:
      "Case-insensitive part of the contact's name, username or phone number (`+` optional), or the contact's whole BSUID",
  }),
});

export const PhoneParam = z.object({
  phone: z.string().min(1).max(64).openapi({
    param: { name: "phone", in: "path" },
    description:
      "Any spelling of the number: `+` optional, Argentine `9` and old `15` optional, bare national digits take the account's country",
    example: "+5491122334455",
  }),
});

const text = (max: number) => z.string().trim().min(1).max(max);
// An identifier may be empty (a form left blank): resolve matches on the others.
const identifier = (max: number) => z.string().trim().max(max);

export const ResolveQuery = z.strictObject({
  phone: identifier(64).optional().openapi({
    description:
      "Contact phone, normalised like by-phone; or the business-scoped user id (BSUID) of a username customer, matched whole",
  }),
  email: identifier(320).optional().openapi({
    description: "Contact e-mail, case-insensitive",
  }),
  instagram: identifier(100).optional().openapi({
    description:
      "Instagram user name in the contact's customFields.instagram; case-insensitive, `@` optional",
  }),
  line: text(64).optional().openapi({
    description: "Business number of a channel; its conversations win ties",
  }),
  channel: z.uuid({ message: "must be a UUID" }).optional().openapi({
    description: "Channel id; its conversations win ties",
  }),
}).refine(
  (q) =>
    q.phone !== undefined || q.email !== undefined || q.instagram !== undefined,
  { message: 'give at least one of "phone", "email" or "instagram"' },
);

export const ResolveResultSchema = z.object({
  conversationId: z.uuid().nullable().openapi({
    description:
      "Best match: on the given line or channel first, then the most recent; null when nothing matches",
  }),
  alternatives: z.array(z.uuid()).openapi({
    description: "Other matching conversations, best first (at most 20)",
  }),
}).openapi("ConversationResolution");

export const UpdateConversationBody = z.strictObject({
  status: ConversationStatusSchema.optional(),
  assignedTo: z.uuid({ message: "must be a UUID or null" }).nullable()
    .optional().openapi({
      description:
        "Id of an agent of the account (else 422 INVALID_AGENT), or null to unassign",
    }),
}).refine((b) => b.status !== undefined || b.assignedTo !== undefined, {
  message: 'give at least one of "status" or "assignedTo"',
});

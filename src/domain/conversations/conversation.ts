import type { Principal } from "../accounts/account.ts";
import type { MessageDirection, MessageStatus } from "../messages/message.ts";
import type { Referral } from "../messages/message_details.ts";

export const CONVERSATION_STATUSES = [
  "open",
  "pending",
  "resolved",
  "closed",
] as const;
export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

export interface ConversationContact {
  id: string;
  /** Null for a contact known only by its BSUID. */
  phoneNumber: string | null;
  userId: string | null;
  username: string | null;
  name: string | null;
}

/** A conversation exactly as the API and the `conversation.created` event show it. */
export interface Conversation {
  id: string;
  contactId: string;
  /** The channel id, or null when the channel was deleted. */
  phoneNumberId: string | null;
  status: ConversationStatus;
  assignedTo: string | null;
  lastMessageAt: string | null;
  lastMessagePreview: string | null;
  lastMessageDirection: MessageDirection | null;
  lastMessageStatus: MessageStatus | null;
  serviceWindowExpiresAt: string | null;
  unreadCount: number;
  createdAt: string;
  contact: ConversationContact;
  /** The click-to-WhatsApp ad that last brought the customer here, kept for attribution. */
  referral: Referral | null;
}

/**
 * Who reads conversations: an account, optionally narrowed to the
 * conversations assigned to one agent (user tokens with visibility
 * `assigned`). Anything outside is treated as absent, never as forbidden.
 */
export interface Viewer {
  accountId: string;
  onlyAssignedTo?: string;
}

export function viewerOf(principal: Principal): Viewer {
  if (principal.kind === "agent" && principal.visibility === "assigned") {
    return {
      accountId: principal.accountId,
      onlyAssignedTo: principal.agentId,
    };
  }
  return { accountId: principal.accountId };
}

/** An Instagram user name as compared: no leading `@`, lower case. */
export function normalizeInstagram(input: string): string {
  return input.trim().replace(/^@+/, "").toLowerCase();
}

/** The longest preview kept on a conversation (characters). */
export const PREVIEW_MAX_LENGTH = 200;

export function truncatePreview(text: string | null): string | null {
  if (text === null) return null;
  const chars = [...text];
  return chars.length <= PREVIEW_MAX_LENGTH
    ? text
    : chars.slice(0, PREVIEW_MAX_LENGTH - 1).join("") + "…";
}

/** Service window length after the contact's last inbound message. */
export const SERVICE_WINDOW_HOURS = 24;

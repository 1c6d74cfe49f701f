// Who sent an inbound message: the phone number, the BSUID or both (§4.7).
import { toE164 } from "../phones/phone.ts";
import { isBsuid } from "../contacts/contact.ts";
import type { MetaContact, MetaMessage } from "./meta_payload.ts";

export interface Sender {
  /** E.164, or null when the customer withholds it (a username user). */
  phoneNumber: string | null;
  /** BSUID exactly as received. */
  userId: string | null;
  parentUserId: string | null;
  username: string | null;
  name: string | null;
}

/** The sender, or the reason it cannot be told (then the message is refused). */
export type SenderResult = { sender: Sender } | { refused: string };

function bsuidOrNull(text: string | undefined): string | null {
  return text !== undefined && isBsuid(text) ? text : null;
}

/**
 * Reads the sender from `from` (phone digits, or a BSUID on some versions),
 * `from_user_id` and the matching `contacts[]` entry. A sender id that is
 * neither a phone number nor a BSUID is refused, never guessed into a phone.
 */
export function senderOf(
  message: MetaMessage,
  contacts: readonly MetaContact[],
): SenderResult {
  const from = message.from?.trim();
  const neither = (id: string) => ({
    refused:
      `sender "${id}" is neither a phone number nor a business-scoped user id`,
  });
  if (message.from_user_id !== undefined && !isBsuid(message.from_user_id)) {
    return neither(message.from_user_id);
  }
  const fromBsuid = bsuidOrNull(from);
  const phoneDigits = from && !fromBsuid ? from : undefined;
  let phoneNumber = phoneDigits === undefined ? null : toE164(phoneDigits);
  if (phoneDigits !== undefined && !phoneNumber) return neither(phoneDigits);
  let userId = message.from_user_id ?? fromBsuid;
  // A lone entry is the sender's unless it names someone else: taking its
  // ids then would join two people into one contact.
  const lone = contacts.length === 1 ? contacts[0]! : undefined;
  const entry =
    contacts.find((c) =>
      (phoneDigits !== undefined && c.wa_id === phoneDigits) ||
      (userId !== null && c.user_id === userId)
    ) ??
      (lone && !(phoneDigits !== undefined && lone.wa_id) &&
          !(userId !== null && lone.user_id)
        ? lone
        : undefined);
  userId ??= bsuidOrNull(entry?.user_id);
  if (!phoneNumber && entry?.wa_id) phoneNumber = toE164(entry.wa_id);
  if (!phoneNumber && !userId) {
    return {
      refused: "it names no sender (no from, from_user_id or contact id)",
    };
  }
  return {
    sender: {
      phoneNumber,
      userId,
      parentUserId: bsuidOrNull(entry?.parent_user_id),
      username: entry?.profile?.username || null,
      name: entry?.profile?.name || null,
    },
  };
}

/**
 * The customer an echo (a message the business sent from its app) went to:
 * `to` (phone digits or a BSUID) and `to_user_id`, read like a sender.
 */
export function recipientOf(
  echo: MetaMessage,
  contacts: readonly MetaContact[],
): SenderResult {
  const raw = echo as Record<string, unknown>;
  const to = typeof raw.to === "string" ? raw.to : undefined;
  const toUserId = typeof raw.to_user_id === "string"
    ? raw.to_user_id
    : undefined;
  return senderOf({
    ...echo,
    ...(to !== undefined ? { from: to } : { from: undefined }),
    ...(toUserId !== undefined ? { from_user_id: toUserId } : {}),
  }, contacts);
}

// Who sent an inbound message: the phone number, the BSUID or both (§4.7).
import { samePhoneVariants, toE164 } from "../phones/phone.ts";
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

/**
 * The sender, with what of the message was ignored to find it (a malformed
 * `from_user_id` beside a usable phone), or the reason it cannot be told
 * (then the message is refused).
 */
export type SenderResult =
  | { sender: Sender; ignored?: string }
  | { refused: string };

export interface SenderOptions {
  /**
   * The message's sender is the only one of its change: then a lone
   * `contacts[]` entry is that sender's profile even when its `wa_id` is
   * written otherwise than `from` (soleSender()).
   */
  soleSender?: boolean;
}

function bsuidOrNull(text: string | undefined): string | null {
  return text !== undefined && isBsuid(text) ? text : null;
}

/** A value for a message: strings quoted, anything else by its type only. */
function shown(value: unknown): string {
  return typeof value === "string"
    ? JSON.stringify(value)
    : `(a ${value === null ? "null" : typeof value})`;
}

/**
 * Reads the sender from `from` (phone digits, or a BSUID on some versions),
 * `from_user_id` and the matching `contacts[]` entry. A sender id that is
 * neither a phone number nor a BSUID is refused, never guessed into a phone;
 * a malformed `from_user_id` is ignored when the rest names the sender. With
 * no id at all, a change's lone contact entry is the sender.
 */
export function senderOf(
  message: MetaMessage,
  contacts: readonly MetaContact[],
  options: SenderOptions = {},
): SenderResult {
  const from = message.from?.trim();
  const claimed = message.from_user_id;
  const claimedUserId = typeof claimed === "string" && isBsuid(claimed)
    ? claimed
    : null;
  const malformed = claimed !== undefined && claimedUserId === null;
  const fromBsuid = bsuidOrNull(from);
  const phoneDigits = from && !fromBsuid ? from : undefined;
  let phoneNumber = phoneDigits === undefined ? null : toE164(phoneDigits);
  if (phoneDigits !== undefined && !phoneNumber) {
    return { refused: neither(shown(phoneDigits)) };
  }
  const givenUserId = claimedUserId ?? fromBsuid;
  let userId = givenUserId;
  const entry = entryOf(contacts, phoneNumber, userId);
  userId ??= bsuidOrNull(entry?.user_id);
  if (!phoneNumber && entry?.wa_id) phoneNumber = toE164(entry.wa_id);
  if (!phoneNumber && !userId) {
    return {
      refused: malformed
        ? neither(shown(claimed))
        : "it names no sender (no from, from_user_id or contact id)",
    };
  }
  // Meta lists the senders of a change in contacts[]: with one of each, the
  // entry is this sender's even when its wa_id is spelled otherwise (the
  // Brazilian ninth digit, say); its ids are not taken then, only its
  // profile. A BSUID has one spelling: an entry with another is someone else.
  const lone = contacts.length === 1 ? contacts[0] : undefined;
  const sole = options.soleSender && lone &&
      !(givenUserId !== null && lone.user_id)
    ? lone
    : undefined;
  const profile = (entry ?? sole)?.profile;
  return {
    sender: {
      phoneNumber,
      userId,
      parentUserId: bsuidOrNull(entry?.parent_user_id),
      username: profile?.username || null,
      name: profile?.name || null,
    },
    ...(malformed
      ? {
        ignored: `from_user_id ${
          shown(claimed)
        } is not a business-scoped user id`,
      }
      : {}),
  };
}

function neither(id: string): string {
  return `sender ${id} is neither a phone number nor a business-scoped user id`;
}

/**
 * The `contacts[]` entry of a sender: the one with its phone number (in any
 * spelling of the same WhatsApp number: `+`, the Argentine mobile 9) or its
 * BSUID; else a lone entry, unless it names someone else (taking its ids
 * then would join two people into one contact).
 */
function entryOf(
  contacts: readonly MetaContact[],
  phoneNumber: string | null,
  userId: string | null,
): MetaContact | undefined {
  const phones = phoneNumber ? samePhoneVariants(phoneNumber) : [];
  const samePhone = (waId: string | undefined) => {
    const e164 = waId === undefined ? null : toE164(waId);
    return e164 !== null && phones.includes(e164);
  };
  const found = contacts.find((c) =>
    samePhone(c.wa_id) || (userId !== null && c.user_id === userId)
  );
  if (found || contacts.length !== 1) return found;
  const lone = contacts[0]!;
  const namesSomeoneElse = (phoneNumber !== null && lone.wa_id) ||
    (userId !== null && lone.user_id);
  return namesSomeoneElse ? undefined : lone;
}

/**
 * Whether the messages of a change come from one sender at most (told by
 * `from`, else `from_user_id`; for echoes `to`, else `to_user_id`).
 */
export function soleSender(
  messages: readonly unknown[],
  fields: readonly [string, string] = ["from", "from_user_id"],
): boolean {
  const senders = new Set<unknown>();
  for (const m of messages) {
    const raw = (m ?? {}) as Record<string, unknown>;
    const id = raw[fields[0]] ?? raw[fields[1]];
    if (id !== undefined) senders.add(id);
    if (senders.size > 1) return false;
  }
  return true;
}

/**
 * The customer an echo (a message the business sent from its app) went to:
 * `to` (phone digits or a BSUID) and `to_user_id`, read like a sender.
 */
export function recipientOf(
  echo: MetaMessage,
  contacts: readonly MetaContact[],
  options: SenderOptions = {},
): SenderResult {
  const raw = echo as Record<string, unknown>;
  const to = typeof raw.to === "string" ? raw.to : undefined;
  return senderOf(
    {
      ...echo,
      from: to,
      from_user_id: raw.to_user_id,
    },
    contacts,
    options,
  );
}

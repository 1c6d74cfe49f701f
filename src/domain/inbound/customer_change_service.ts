// What a customer (or the business on its own app) did that is not a new
// inbound message: an edit, a deletion, a changed number or user id, and
// messages sent from the WhatsApp Business app on a coexistence number.
import type { Executor } from "../../db/schema.ts";
import { toJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { newId } from "../../ids.ts";
import type { Channel } from "../channels/channel.ts";
import type { Contact } from "../contacts/contact.ts";
import { isBsuid } from "../contacts/contact.ts";
import {
  findContactByPhone,
  findContactByUserId,
  setContactIdentity,
} from "../contacts/contact_repo.ts";
import { onlyHolders } from "../contacts/contact_guard_repo.ts";
import { planContact } from "../contacts/contact_identity_service.ts";
import { planConversation } from "../conversations/conversation_create_service.ts";
import {
  recordOutbound,
  updateLastMessagePreview,
} from "../conversations/conversation_write_repo.ts";
import { previewOf } from "../messages/outbound.ts";
import {
  contentUnchanged,
  findAccountMessageByWamid,
  findMessageByWamid,
  insertMessage,
  noMessageWithWamid,
  toMessage,
  updateMessageDetails,
} from "../messages/message_repo.ts";
import {
  type Message,
  toMessageView,
  UPSTREAM_MESSAGE_DEFAULTS,
} from "../messages/message.ts";
import { recordEvent } from "../events/event_service.ts";
import type { Planned } from "../events/planned_event_service.ts";
import { parseDetails } from "../messages/message_details.ts";
import { touchContactLastMessage } from "../messages/send_repo.ts";
import { toE164 } from "../phones/phone.ts";
import { inboundContent, type MetaMessage } from "./meta_payload.ts";
import type { Sender } from "./sender.ts";
import { queueInboundMedia } from "./inbound_media_service.ts";

function objectOf(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === "object"
    ? v as Record<string, unknown>
    : {};
}

/** True when the sender is the contact who wrote the message (by phone number or BSUID). */
async function isAuthor(
  trx: Executor,
  original: { account_id: string; contact_id: string; direction: string },
  sender: Sender,
): Promise<boolean> {
  if (original.direction !== "inbound") return false;
  const byPhone = sender.phoneNumber
    ? await findContactByPhone(trx, original.account_id, sender.phoneNumber)
    : undefined;
  const byUser = sender.userId
    ? await findContactByUserId(trx, original.account_id, sender.userId)
    : undefined;
  return byPhone?.id === original.contact_id ||
    byUser?.id === original.contact_id;
}

/**
 * A customer's edit (`type: "edit"`) replaces the original's content and
 * keeps the previous one in its edit history; a revoke (deleted for
 * everyone) marks it deleted. Only the customer who wrote the original can
 * do either. Applied once per upstream id. Returns why it was skipped, or
 * null.
 */
export async function applyEditOrRevoke(
  trx: Executor,
  plan: Planned & { channel: Channel; at: Date },
  input: { message: MetaMessage; sender: Sender },
): Promise<string | null> {
  const { channel, at, writes } = plan;
  const { message } = input;
  const raw = objectOf((message as Record<string, unknown>)[message.type]);
  const originalId = raw.original_message_id;
  if (typeof originalId !== "string") {
    return `${message.type} names no original_message_id`;
  }
  const original = await findAccountMessageByWamid(
    trx,
    channel.accountId,
    originalId,
  );
  if (!original) return `${message.type} of unknown message "${originalId}"`;
  if (!(await isAuthor(trx, original, input.sender))) {
    return `${message.type} of message "${originalId}", which this sender did not write`;
  }
  const details = parseDetails(original.details);
  const atIso = toDbTime(at);
  // The change is made on the original as read: another edit meanwhile
  // plans this one again, so neither is lost.
  writes.expectRow(contentUnchanged(original));
  if (message.type === "revoke") {
    if (details.deletedAt) return null;
    details.deletedAt = atIso;
    await updateMessageDetails(writes.db, original.id, {
      details: toJson(details),
      updatedAt: atIso,
    });
    await recordUpdated(plan, {
      ...original,
      details: toJson(details),
      updated_at: atIso,
    });
    return null;
  }
  const edits = details.edits ?? [];
  if (edits.some((e) => e.editWaMessageId === message.id)) return null;
  const edited = objectOf(raw.message);
  if (typeof edited.type !== "string") return "edit carries no message";
  const previous = objectOf(JSON.parse(original.content));
  const content = editedContent(previous, edited);
  details.edits = [...edits, {
    previous,
    editWaMessageId: message.id,
    editedAt: atIso,
  }];
  await updateMessageDetails(writes.db, original.id, {
    content: toJson(content),
    details: toJson(details),
    updatedAt: atIso,
  });
  await updateLastMessagePreview(writes.db, {
    conversationId: original.conversation_id,
    messageId: original.id,
    preview: previewOf(original.type, content),
  });
  await recordUpdated(plan, {
    ...original,
    content: toJson(content),
    details: toJson(details),
    updated_at: atIso,
  });
  return null;
}

/** The message.updated event of a message as the plan's writes leave it. */
async function recordUpdated(
  plan: Planned & { at: Date },
  row: Parameters<typeof toMessage>[0],
): Promise<void> {
  await recordEvent(plan.writes.db, {
    accountId: row.account_id,
    type: "message.updated",
    data: toMessageView(toMessage(row)),
    createdAt: plan.at,
  }, plan.events);
}

/**
 * The content after an edit: a text edit replaces the body; an edit of a
 * media message changes its caption and keeps the media.
 */
function editedContent(
  previous: Record<string, unknown>,
  edited: Record<string, unknown>,
): Record<string, unknown> {
  const body = objectOf(edited[edited.type as string]);
  if (edited.type === "text") return { body: String(body.body ?? "") };
  return typeof body.caption === "string"
    ? { ...previous, caption: body.caption }
    : previous;
}

/**
 * A `system` message that announces a new number (customer_changed_number)
 * or a new BSUID (user_changed_user_id) moves the contact to it, unless
 * another contact already holds it. Returns why it was not applied, or null.
 */
export async function applySystemChange(
  trx: Executor,
  plan: Planned & { contact: Contact; at: Date },
  message: MetaMessage,
): Promise<string | null> {
  const { contact, at, writes } = plan;
  const system = objectOf((message as Record<string, unknown>).system);
  const updatedAt = toDbTime(at);
  if (system.type === "customer_changed_number") {
    const phone = typeof system.new_wa_id === "string"
      ? toE164(system.new_wa_id)
      : null;
    if (!phone) return "customer_changed_number without a valid new_wa_id";
    const holder = await findContactByPhone(trx, contact.accountId, phone);
    if (holder && holder.id !== contact.id) {
      return `new number "${phone}" already belongs to contact "${holder.id}"`;
    }
    writes.expectRow(onlyHolders({ ...contact, phoneNumber: phone }, [
      contact.id,
    ]));
    await setContactIdentity(writes.db, contact.id, {
      phoneNumber: phone,
      updatedAt,
    });
    return null;
  }
  if (system.type === "user_changed_user_id") {
    const userId = [system.new_user_id, system.user_id]
      .find((v) => typeof v === "string" && isBsuid(v)) as string | undefined;
    if (!userId) return "user_changed_user_id without a valid new user id";
    const holder = await findContactByUserId(trx, contact.accountId, userId);
    if (holder && holder.id !== contact.id) {
      return `new user id "${userId}" already belongs to contact "${holder.id}"`;
    }
    writes.expectRow(onlyHolders({ accountId: contact.accountId, userId }, [
      contact.id,
    ]));
    await setContactIdentity(writes.db, contact.id, { userId, updatedAt });
  }
  return null;
}

/**
 * The contact of a person on a channel and their conversation, each created
 * (with its event) when missing, as a plan's writes.
 */
export async function openThread(
  trx: Executor,
  plan: Planned & { channel: Channel; now: Date },
  person: Sender,
) {
  const { channel, now } = plan;
  const { contact, joined } = await planContact(trx, {
    ...plan,
    input: { accountId: channel.accountId, ...person, now },
  });
  const { conversation } = await planConversation(trx, {
    ...plan,
    input: {
      accountId: channel.accountId,
      contactId: contact.id,
      channelId: channel.id,
      now,
      contact,
      ...(joined ? { joined } : {}),
    },
  });
  return { contact, conversation };
}

/**
 * A message the business sent from the WhatsApp Business app on a
 * coexistence number (`smb_message_echoes`): stored as an outbound message
 * already `sent`, with origin `business_app`, and no send job. Its media is
 * copied into our store like a customer's.
 */
export async function applyEcho(
  trx: Executor,
  plan: Planned & { channel: Channel },
  input: { echo: MetaMessage; recipient: Sender; at: Date; now: Date },
): Promise<void> {
  const { echo, now } = input;
  const { channel, writes } = plan;
  if (await findMessageByWamid(trx, echo.id)) return;
  const { contact, conversation } = await openThread(
    trx,
    { ...plan, now },
    input.recipient,
  );
  const { type, content, media } = inboundContent(echo);
  const nowIso = toDbTime(now);
  const id = newId(now.getTime());
  const message: Message = {
    id,
    accountId: channel.accountId,
    conversationId: conversation.id,
    contactId: contact.id,
    channelId: channel.id,
    direction: "outbound",
    type,
    content,
    status: "sent",
    waMessageId: echo.id,
    errorCode: null,
    errorMessage: null,
    origin: "business_app",
    ...UPSTREAM_MESSAGE_DEFAULTS,
    contextWaMessageId: echo.context?.id ?? null,
    upstreamAt: toDbTime(input.at),
    details: {},
    createdAt: nowIso,
    updatedAt: nowIso,
  };
  writes.expectRow(noMessageWithWamid(echo.id));
  await insertMessage(writes.db, message);
  await recordEvent(writes.db, {
    accountId: channel.accountId,
    type: "message.created",
    data: toMessageView(message),
    createdAt: now,
  }, plan.events);
  if (media) {
    await queueInboundMedia(writes.db, channel, { messageId: id, media, now });
  }
  await recordOutbound(writes.db, {
    conversationId: conversation.id,
    messageId: id,
    preview: previewOf(type, content),
    status: "sent",
    at: input.at,
  });
  await touchContactLastMessage(writes.db, contact.id, nowIso);
}

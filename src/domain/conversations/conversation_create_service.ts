// Creating a conversation records its event, so it lives beside the event
// service rather than in the write repo.
import type { Executor } from "../../db/schema.ts";
import { toDbTime } from "../../db/time.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { type HeldEvents, recordEvent } from "../events/event_service.ts";
import type { Contact } from "../contacts/contact.ts";
import type { Conversation } from "./conversation.ts";
import {
  findConversation,
  findConversationForContact,
  toConversation,
} from "./conversation_repo.ts";
import {
  conversationExists,
  insertConversation,
  openConversationRow,
} from "./conversation_write_repo.ts";

/** A contact's conversation on a channel (null: no channel), and when it is asked for. */
interface NewConversation {
  accountId: string;
  contactId: string;
  channelId: string | null;
  now: Date;
}

/**
 * The conversation of a contact on a channel, created `open` when missing
 * (with its `conversation.created` event) in the caller's transaction.
 */
export async function findOrCreateConversation(
  trx: Executor,
  input: NewConversation,
): Promise<{ conversation: Conversation; created: boolean }> {
  const existing = await findConversationForContact(trx, input);
  if (existing) return { conversation: existing, created: false };
  return await createMissingConversation(trx, input);
}

/**
 * Creates the conversation of a contact on a channel that the caller just
 * looked up in this transaction and found none for (findOrCreateConversation
 * without its lookup), with its `conversation.created` event; when another
 * writer created it meanwhile, that conversation.
 */
export async function createMissingConversation(
  trx: Executor,
  input: NewConversation,
): Promise<{ conversation: Conversation; created: boolean }> {
  const at = toDbTime(input.now);
  const id = newId();
  const inserted = await insertConversation(
    trx,
    openConversationRow({ ...input, id, at }),
  );
  const conversation = inserted
    ? await findConversation(trx, { accountId: input.accountId }, id)
    : await findConversationForContact(trx, input);
  if (!conversation) {
    throw new AppError(
      "INTERNAL_ERROR",
      `Cannot create conversation for contact "${input.contactId}"`,
    );
  }
  if (inserted) {
    await recordEvent(trx, {
      accountId: input.accountId,
      type: "conversation.created",
      data: conversation,
      createdAt: at,
    });
  }
  return { conversation, created: inserted };
}

/**
 * findOrCreateConversation() as a plan (src/db/planned_writes.ts): reads on
 * `db`, records its writes on `writes` and its event on `events`. A new
 * conversation is inserted unless (contact, channel) has one by then: the
 * batch then fails and the plan runs again and finds it. `joined`: a
 * contact the plan joins into `contact` (its conversation on the channel
 * becomes the contact's).
 */
export async function planConversation(
  db: Executor,
  plan: {
    writes: PlannedWrites;
    events: HeldEvents;
    input: NewConversation & { contact: Contact; joined?: string };
  },
): Promise<{ conversation: Conversation; created: boolean }> {
  const { writes, events, input } = plan;
  const { contact } = input;
  const existing = await findConversationForContact(db, input) ??
    (input.joined
      ? await findConversationForContact(db, {
        ...input,
        contactId: input.joined,
      })
      : undefined);
  if (existing) {
    writes.expectRow(conversationExists(existing.id));
    return { conversation: existing, created: false };
  }
  const at = toDbTime(input.now);
  const row = openConversationRow({ ...input, id: newId(), at });
  await insertConversation(writes.db, row);
  writes.expectChanges(1);
  const conversation = toConversation({
    ...row,
    contact_phone_number: contact.phoneNumber,
    contact_user_id: contact.userId,
    contact_username: contact.username,
    contact_name: contact.name,
  });
  await recordEvent(writes.db, {
    accountId: input.accountId,
    type: "conversation.created",
    data: conversation,
    createdAt: at,
  }, events);
  return { conversation, created: true };
}

// Who a WhatsApp sender is: a phone number, a business-scoped user id
// (BSUID) or both (reference §4.7). One person is one contact.
import type { Executor } from "../../db/schema.ts";
import { toDbTime } from "../../db/time.ts";
import { newId } from "../../ids.ts";
import { recordEvent } from "../events/event_service.ts";
import { moveContactConversations } from "../conversations/conversation_write_repo.ts";
import {
  type Contact,
  contactView,
  type Identity,
  mergeCustomFields,
  newContact,
} from "./contact.ts";
import * as repo from "./contact_repo.ts";

/** An identity (see Identity) as of `now`. */
export interface ContactIdentity extends Identity {
  now: Date;
}

async function lookup(
  trx: Executor,
  input: ContactIdentity,
): Promise<{ byPhone?: Contact; byUser?: Contact }> {
  return {
    ...(input.phoneNumber
      ? {
        byPhone: await repo.findContactByPhone(
          trx,
          input.accountId,
          input.phoneNumber,
        ),
      }
      : {}),
    ...(input.userId
      ? {
        byUser: await repo.findContactByUserId(
          trx,
          input.accountId,
          input.userId,
        ),
      }
      : {}),
  };
}

/**
 * Joins contact `drop` into `keep`: its conversations and messages move,
 * then it is deleted and `keep` takes every identifier and field it lacked.
 * No event: both contacts were announced when they were created.
 */
async function joinContacts(
  trx: Executor,
  keep: Contact,
  drop: Contact,
  at: string,
): Promise<void> {
  await moveContactConversations(trx, { from: drop.id, to: keep.id });
  // Deleted first: its phone number and BSUID are unique in the account.
  await repo.deleteContact(trx, drop.id);
  await repo.updateContact(trx, keep.id, {
    email: keep.email ?? drop.email,
    tags: [...keep.tags, ...drop.tags.filter((t) => !keep.tags.includes(t))],
    customFields: mergeCustomFields(drop.customFields, keep.customFields),
    lastMessageAt: [keep.lastMessageAt, drop.lastMessageAt]
      .filter((t) => t !== null).sort().at(-1) ?? null,
    updatedAt: at,
  });
  await repo.setContactIdentity(trx, keep.id, {
    phoneNumber: keep.phoneNumber ?? drop.phoneNumber,
    userId: keep.userId ?? drop.userId,
    parentUserId: keep.parentUserId ?? drop.parentUserId,
    username: keep.username ?? drop.username,
    name: keep.name ?? drop.name,
    updatedAt: at,
  });
}

/**
 * Fills what the contact lacks from the payload; the username follows its
 * latest value, and so does the BSUID when the payload pairs it with the
 * phone number (a changed number brings a new BSUID, reference §4.7).
 */
async function completeIdentity(
  trx: Executor,
  contact: Contact,
  input: ContactIdentity,
  at: string,
): Promise<void> {
  const patch = {
    ...(!contact.phoneNumber && input.phoneNumber
      ? { phoneNumber: input.phoneNumber }
      : {}),
    ...(input.userId && contact.userId !== input.userId &&
        (!contact.userId || input.phoneNumber)
      ? { userId: input.userId }
      : {}),
    ...(input.parentUserId && contact.parentUserId !== input.parentUserId
      ? { parentUserId: input.parentUserId }
      : {}),
    ...(input.username && contact.username !== input.username
      ? { username: input.username }
      : {}),
    ...(!contact.name && input.name ? { name: input.name } : {}),
  };
  if (Object.keys(patch).length === 0) return;
  await repo.setContactIdentity(trx, contact.id, { ...patch, updatedAt: at });
}

/**
 * Finds the contact of a phone number (Argentine variants included) or a
 * BSUID, or creates it with its `contact.created` event, in the caller's
 * transaction. When the two identifiers belong to two contacts they are
 * joined into the older one, so one person is never two contacts.
 */
export async function findOrCreateContact(
  trx: Executor,
  input: ContactIdentity,
): Promise<{ contact: Contact; created: boolean }> {
  if (!input.phoneNumber && !input.userId) {
    throw new Error("Cannot find a contact without a phone number or BSUID");
  }
  const at = toDbTime(input.now);
  const { byPhone, byUser } = await lookup(trx, input);
  if (byPhone || byUser) {
    let contact = (byPhone ?? byUser)!;
    if (byPhone && byUser && byPhone.id !== byUser.id) {
      const [keep, drop] = byPhone.createdAt <= byUser.createdAt
        ? [byPhone, byUser]
        : [byUser, byPhone];
      await joinContacts(trx, keep, drop, at);
      contact = (await repo.findContact(trx, input.accountId, keep.id))!;
    }
    await completeIdentity(trx, contact, input, at);
    return {
      contact: (await repo.findContact(trx, input.accountId, contact.id))!,
      created: false,
    };
  }
  return await createMissingContact(trx, input);
}

/**
 * Creates the contact of an identity that the caller just looked up in this
 * transaction and found no contact for (findOrCreateContact without its
 * lookup), with its `contact.created` event; when another writer created it
 * meanwhile, that contact.
 */
export async function createMissingContact(
  trx: Executor,
  input: ContactIdentity,
): Promise<{ contact: Contact; created: boolean }> {
  const at = toDbTime(input.now);
  const inserted = await repo.insertContact(
    trx,
    newContact({ ...input, id: newId(), createdAt: at }),
  );
  if (!inserted) {
    // Another writer created it between the lookup and the insert.
    const raced = await lookup(trx, input);
    const found = raced.byPhone ?? raced.byUser;
    if (found) return { contact: found, created: false };
    throw new Error(
      `Cannot create contact "${
        input.phoneNumber ?? input.userId
      }": insert conflicted but no row was found`,
    );
  }
  await recordEvent(trx, {
    accountId: input.accountId,
    type: "contact.created",
    data: contactView(inserted),
    createdAt: at,
  });
  return { contact: inserted, created: true };
}

// Who a WhatsApp sender is: a phone number, a business-scoped user id
// (BSUID) or both (reference §4.7). One person is one contact.
import type { Executor } from "../../db/schema.ts";
import { toDbTime } from "../../db/time.ts";
import { newId } from "../../ids.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { type HeldEvents, recordEvent } from "../events/event_service.ts";
import {
  contactConversationsUnchanged,
  moveContactConversations,
} from "../conversations/conversation_write_repo.ts";
import {
  type Contact,
  contactView,
  type Identity,
  mergeCustomFields,
  newContact,
} from "./contact.ts";
import * as repo from "./contact_repo.ts";
import * as guards from "./contact_guard_repo.ts";

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
  options: { at: string; writes?: Executor },
): Promise<Contact> {
  const { at, writes = trx } = options;
  await moveContactConversations(trx, { from: drop.id, to: keep.id, writes });
  // Deleted first: its phone number and BSUID are unique in the account.
  await repo.deleteContact(writes, drop.id);
  const joined = joinedContact(keep, drop);
  await repo.updateContact(writes, keep.id, {
    email: joined.email,
    tags: joined.tags,
    customFields: joined.customFields,
    lastMessageAt: joined.lastMessageAt,
    updatedAt: at,
  });
  await repo.setContactIdentity(writes, keep.id, {
    phoneNumber: joined.phoneNumber,
    userId: joined.userId,
    parentUserId: joined.parentUserId,
    username: joined.username,
    name: joined.name,
    updatedAt: at,
  });
  return joined;
}

/** Contact `keep` as joinContacts() leaves it. */
function joinedContact(keep: Contact, drop: Contact): Contact {
  return {
    ...keep,
    email: keep.email ?? drop.email,
    tags: [...keep.tags, ...drop.tags.filter((t) => !keep.tags.includes(t))],
    customFields: mergeCustomFields(drop.customFields, keep.customFields),
    lastMessageAt: [keep.lastMessageAt, drop.lastMessageAt]
      .filter((t) => t !== null).sort().at(-1) ?? null,
    phoneNumber: keep.phoneNumber ?? drop.phoneNumber,
    userId: keep.userId ?? drop.userId,
    parentUserId: keep.parentUserId ?? drop.parentUserId,
    username: keep.username ?? drop.username,
    name: keep.name ?? drop.name,
  };
}

/**
 * What the contact lacks of the payload; the username follows its
 * latest value, and so does the BSUID when the payload pairs it with the
 * phone number (a changed number brings a new BSUID, reference §4.7).
 */
function identityPatch(contact: Contact, input: ContactIdentity) {
  return {
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
}

/** Writes what identityPatch() finds the contact lacks; the contact as it then is. */
async function completeIdentity(
  writes: Executor,
  contact: Contact,
  input: ContactIdentity,
  at: string,
): Promise<Contact> {
  const patch = identityPatch(contact, input);
  if (Object.keys(patch).length === 0) return contact;
  await repo.setContactIdentity(writes, contact.id, {
    ...patch,
    updatedAt: at,
  });
  return { ...contact, ...patch };
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
      await joinContacts(trx, keep, drop, { at });
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

/** What planContact() found or made. */
export interface PlannedContact {
  contact: Contact;
  created: boolean;
  /** The contact joined into `contact` (its conversations become its). */
  joined?: string;
}

/**
 * findOrCreateContact() as a plan (src/db/planned_writes.ts): reads on
 * `db`, records its writes on `writes` and its events on `events`, guarded
 * so that the batch fails (and the plan runs again) when another writer
 * changed what it read: a new contact is inserted only while no contact
 * holds its identifiers (two instances that receive the same new customer
 * at once make one contact: the second plans again and finds it); a found
 * contact must still hold its identity, and be the only one holding the
 * identifiers; a join needs both contacts and their conversations as read.
 */
export async function planContact(
  db: Executor,
  plan: { writes: PlannedWrites; events: HeldEvents; input: ContactIdentity },
): Promise<PlannedContact> {
  const { writes, events, input } = plan;
  if (!input.phoneNumber && !input.userId) {
    throw new Error("Cannot find a contact without a phone number or BSUID");
  }
  const at = toDbTime(input.now);
  const { byPhone, byUser } = await lookup(db, input);
  const found = byPhone ?? byUser;
  if (!found) {
    const contact = newContact({ ...input, id: newId(), createdAt: at });
    await guards.insertContactIfNone(writes.db, contact);
    writes.expectChanges(1);
    await recordEvent(writes.db, {
      accountId: input.accountId,
      type: "contact.created",
      data: contactView(contact),
      createdAt: at,
    }, events);
    return { contact, created: true };
  }
  if (byPhone && byUser && byPhone.id !== byUser.id) {
    const [keep, drop] = byPhone.createdAt <= byUser.createdAt
      ? [byPhone, byUser]
      : [byUser, byPhone];
    if (writes.guarded) {
      writes.expectRow(guards.contactUnchanged(keep));
      writes.expectRow(guards.contactUnchanged(drop));
      writes.expectRow(guards.onlyHolders(input, [keep.id, drop.id]));
      writes.expectRow(
        await contactConversationsUnchanged(db, [keep.id, drop.id]),
      );
    }
    const joined = await joinContacts(db, keep, drop, {
      at,
      writes: writes.db,
    });
    return {
      contact: await completeIdentity(writes.db, joined, input, at),
      created: false,
      joined: drop.id,
    };
  }
  writes.expectRow(guards.identityUnchanged(found));
  writes.expectRow(guards.onlyHolders(input, [found.id]));
  return {
    contact: await completeIdentity(writes.db, found, input, at),
    created: false,
  };
}

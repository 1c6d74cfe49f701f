import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { toDbTime } from "../../db/time.ts";
import type { PageResult } from "../pagination.ts";
import { toE164 } from "../phones/phone.ts";
import { recordEvent } from "../events/event_service.ts";
import { runPlannedWithEvents } from "../events/planned_event_service.ts";
import {
  checkCustomFields,
  checkTags,
  type Contact,
  contactView,
  type CustomFields,
  mergeCustomFields,
} from "./contact.ts";
import * as repo from "./contact_repo.ts";
import * as guards from "./contact_guard_repo.ts";
import type { Viewer } from "../conversations/conversation.ts";
import { contactHasVisibleConversation } from "../conversations/conversation_repo.ts";

export {
  findContactByPhone,
  findContactByUserId,
  findContactOnChannel,
} from "./contact_repo.ts";
export { findOrCreateContact } from "./contact_identity_service.ts";

export interface Deps {
  db: Db;
  /** Writes go as plans (src/db/planned_writes.ts): on libSQL, no transaction. */
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
}

export interface ContactListQuery {
  accountId: string;
  page: number;
  pageSize: number;
  search?: string | undefined;
  tag?: string | undefined;
}

export interface NewContact {
  accountId: string;
  /** With country code; `+` optional. */
  phoneNumber: string;
  name?: string | null | undefined;
  email?: string | null | undefined;
  tags?: string[] | undefined;
  customFields?: CustomFields | undefined;
}

/** Fields a PATCH may change; undefined means unchanged, null clears name or email. */
export interface ContactChanges {
  phoneNumber?: string | undefined;
  name?: string | null | undefined;
  email?: string | null | undefined;
  tags?: string[] | undefined;
  /** Merged into the existing fields; a key set to null is removed. */
  customFields?: CustomFields | undefined;
  optedIn?: boolean | undefined;
}

/** One page of the account's contacts, newest first. */
export async function listContacts(
  deps: { db: Db },
  query: ContactListQuery,
): Promise<PageResult<Contact>> {
  const { items, total } = await repo.listContacts(deps.db, {
    accountId: query.accountId,
    search: query.search,
    tag: query.tag,
    limit: query.pageSize,
    offset: (query.page - 1) * query.pageSize,
  });
  return { items, page: query.page, pageSize: query.pageSize, total };
}

/** A contact of the account, or CONTACT_NOT_FOUND (also for another account's id). */
export async function getContact(
  deps: { db: Db },
  ref: { viewer: Viewer; id: string },
): Promise<Contact> {
  const found = await repo.findContact(deps.db, ref.viewer.accountId, ref.id);
  const hidden = found && ref.viewer.onlyAssignedTo !== undefined &&
    !await contactHasVisibleConversation(deps.db, ref.viewer, found.id);
  if (!found || hidden) {
    throw new AppError("CONTACT_NOT_FOUND", `Cannot find contact "${ref.id}"`);
  }
  return found;
}

function requireE164(input: string, action: string): string {
  const e164 = toE164(input);
  if (!e164) {
    throw new AppError(
      "INVALID_PHONE",
      `Cannot ${action}: "${input}" is not a valid phone number with country code`,
    );
  }
  return e164;
}

function alreadyExists(action: string, phone: string, id?: string): AppError {
  return new AppError(
    "CONTACT_ALREADY_EXISTS",
    `Cannot ${action}: a contact with phone number "${phone}" already exists`,
    id ? { details: { contactId: id } } : {},
  );
}

/**
 * Creates a contact and records `contact.created` atomically (a group
 * commit's transaction, or on libSQL its lookup, then a batch that inserts
 * it only while no contact holds the number: one created meanwhile plans
 * it again, and the lookup then refuses it).
 */
export async function createContact(
  deps: Deps,
  input: NewContact,
): Promise<Contact> {
  const action = "create contact";
  const phoneNumber = requireE164(input.phoneNumber, action);
  const tags = checkTags(input.tags ?? []);
  const customFields = checkCustomFields(
    mergeCustomFields({}, input.customFields ?? {}),
  );
  const now = toDbTime(deps.clock.now());
  const contact: Contact = {
    id: newId(),
    accountId: input.accountId,
    phoneNumber,
    userId: null,
    parentUserId: null,
    username: null,
    name: input.name ?? null,
    email: input.email ?? null,
    tags,
    customFields,
    optedIn: true,
    lastMessageAt: null,
    createdAt: now,
  };
  return await runPlannedWithEvents(deps.commits, async (db, planned) => {
    const existing = await repo.findContactByPhone(
      db,
      input.accountId,
      phoneNumber,
    );
    if (existing) throw alreadyExists(action, phoneNumber, existing.id);
    await guards.insertContactIfNone(planned.writes.db, contact);
    planned.writes.expectChanges(1);
    await recordEvent(planned.writes.db, {
      accountId: input.accountId,
      type: "contact.created",
      data: contactView(contact),
      createdAt: now,
    }, planned.events);
    return contact;
  });
}

/**
 * Changes only the given fields of a contact and returns it, atomically (a
 * group commit's transaction, or on libSQL its reads, then a batch guarded
 * on the contact as read and, for a new number, on no other contact
 * holding it).
 */
export async function updateContact(
  deps: Deps,
  input: { accountId: string; id: string; changes: ContactChanges },
): Promise<Contact> {
  const action = "update contact";
  const changes = input.changes;
  if (Object.values(changes).every((v) => v === undefined)) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot ${action}: send at least one field to change`,
    );
  }
  const phoneNumber = changes.phoneNumber === undefined
    ? undefined
    : requireE164(changes.phoneNumber, action);
  const tags = changes.tags === undefined ? undefined : checkTags(changes.tags);
  return await deps.commits.runPlanned(async (trx, writes) => {
    const existing = await repo.findContact(trx, input.accountId, input.id);
    if (!existing) {
      throw new AppError(
        "CONTACT_NOT_FOUND",
        `Cannot find contact "${input.id}"`,
      );
    }
    if (phoneNumber !== undefined) {
      const holder = await repo.findContactByPhone(
        trx,
        input.accountId,
        phoneNumber,
      );
      if (holder && holder.id !== existing.id) {
        throw alreadyExists(action, phoneNumber, holder.id);
      }
    }
    const customFields = changes.customFields === undefined
      ? undefined
      : checkCustomFields(
        mergeCustomFields(existing.customFields, changes.customFields),
      );
    // What it is merged with and who holds the number: as read.
    writes.expectRow(guards.contactUnchanged(existing));
    if (phoneNumber !== undefined) {
      writes.expectRow(
        guards.onlyHolders({ accountId: input.accountId, phoneNumber }, [
          existing.id,
        ]),
      );
    }
    await repo.updateContact(writes.db, existing.id, {
      phoneNumber,
      name: changes.name,
      email: changes.email,
      tags,
      customFields,
      optedIn: changes.optedIn,
      updatedAt: toDbTime(deps.clock.now()),
    });
    const updated: Contact = {
      ...existing,
      ...(phoneNumber !== undefined ? { phoneNumber } : {}),
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.email !== undefined ? { email: changes.email } : {}),
      ...(tags !== undefined ? { tags } : {}),
      ...(customFields !== undefined ? { customFields } : {}),
      ...(changes.optedIn !== undefined ? { optedIn: changes.optedIn } : {}),
    };
    return () => updated;
  });
}

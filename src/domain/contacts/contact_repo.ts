import { type Compilable, type SelectQueryBuilder, sql } from "kysely";
import { insertRow, prepared } from "../../db/prepared.ts";
import type { ContactsTable, Database, Executor } from "../../db/schema.ts";
import { fromJson, toJson } from "../../db/json.ts";
import { insertRows, jsonQuery } from "../../db/bulk.ts";
import { samePhoneVariants } from "../phones/phone.ts";
import {
  type Contact,
  type CustomFields,
  phoneSearchDigits,
} from "./contact.ts";
import { executeCompiled } from "../../db/raw.ts";

export interface ContactFilter {
  accountId: string;
  /** Case-insensitive substring of name, phone number, e-mail or username; or an exact BSUID. */
  search?: string | undefined;
  /** Exact tag. */
  tag?: string | undefined;
}

function toContact(r: ContactsTable): Contact {
  return {
    id: r.id,
    accountId: r.account_id,
    phoneNumber: r.phone_number,
    userId: r.user_id,
    parentUserId: r.parent_user_id,
    username: r.username,
    name: r.name,
    email: r.email,
    tags: fromJson<string[]>(r.tags, []),
    customFields: fromJson<CustomFields>(r.custom_fields, {}),
    optedIn: r.opted_in === 1,
    lastMessageAt: r.last_message_at,
    createdAt: r.created_at,
  };
}

/** Both engines report a UNIQUE violation with SQLite's own message. */
function isUniqueViolation(err: unknown): boolean {
  return err instanceof Error && /UNIQUE constraint failed/i.test(err.message);
}

/** The row of a contact as stored. */
/** The stored row of a contact. */
export function toContactsRow(contact: Contact): ContactsTable {
  return {
    id: contact.id,
    account_id: contact.accountId,
    phone_number: contact.phoneNumber,
    user_id: contact.userId,
    parent_user_id: contact.parentUserId,
    username: contact.username,
    name: contact.name,
    email: contact.email,
    tags: toJson(contact.tags),
    custom_fields: toJson(contact.customFields),
    opted_in: contact.optedIn ? 1 : 0,
    last_message_at: contact.lastMessageAt,
    created_at: contact.createdAt,
    updated_at: contact.createdAt,
  };
}

/** Inserts a contact; null when its phone number or BSUID is already taken in the account. */
export async function insertContact(
  db: Executor,
  contact: Contact,
): Promise<Contact | null> {
  const row = toContactsRow(contact);
  try {
    await db.executeQuery(insertRow("contacts", row));
  } catch (err) {
    if (isUniqueViolation(err)) return null;
    throw err;
  }
  return toContact(row);
}

/**
 * Inserts many contacts (one statement for a batch), updated at their
 * `lastMessageAt` when they have one (a batch writes its new recipients with
 * their message); the caller has checked, in its write transaction, that
 * none exists yet.
 */
export async function insertContacts(
  db: Executor,
  contacts: readonly Contact[],
): Promise<void> {
  await insertRows(
    db,
    "contacts",
    contacts.map((c) => ({
      ...toContactsRow(c),
      updated_at: c.lastMessageAt ?? c.createdAt,
    })),
  );
}

const CONTACTS_BY_SQL = {
  phone_number: `select * from contacts where account_id = ?
    and phone_number in (select value from json_each(?))`,
  user_id: `select * from contacts where account_id = ?
    and user_id in (select value from json_each(?))`,
};

/**
 * The contacts of an account with any of these exact phone numbers (E.164)
 * or BSUIDs, in one statement (none for no values).
 */
export async function findContactsBy(
  db: Executor,
  accountId: string,
  column: keyof typeof CONTACTS_BY_SQL,
  values: readonly string[],
): Promise<Contact[]> {
  if (values.length === 0) return [];
  const { rows } = await db.executeQuery(
    jsonQuery<ContactsTable>(CONTACTS_BY_SQL[column], values, accountId),
  );
  return rows.map(toContact);
}

/** Deletes a contact (its conversations must have moved first). */
export async function deleteContact(db: Executor, id: string): Promise<void> {
  await db.deleteFrom("contacts").where("id", "=", id).execute();
}

/** Finds a contact of an account; another account's id is not found. */
export async function findContact(
  db: Executor,
  accountId: string,
  id: string,
): Promise<Contact | undefined> {
  const r = await db.selectFrom("contacts").selectAll()
    .where("account_id", "=", accountId).where("id", "=", id)
    .executeTakeFirst();
  return r ? toContact(r) : undefined;
}

/**
 * A query over the spellings of one number (`phones`: their placeholders),
 * compiled once per count of spellings (every send runs one). The answer
 * is the row of the exact spelling, else of another.
 */
function bySpellings<R extends { phone_number: string | null }>(
  build: (
    db: Executor,
    p: (name: string) => string,
    phones: string[],
  ) => Compilable<R>,
) {
  const byCount = new Map<number, ReturnType<typeof prepared<string, R>>>();
  return async (
    db: Executor,
    e164: string,
    values: Record<string, unknown>,
  ): Promise<R | undefined> => {
    const variants = samePhoneVariants(e164);
    const n = variants.length;
    let query = byCount.get(n);
    if (!query) {
      query = prepared<string, R>((db, p) =>
        build(db, p, Array.from({ length: n }, (_, i) => p(`v${i}`)))
      );
      byCount.set(n, query);
    }
    const { rows } = await executeCompiled(
      db,
      query(db, {
        ...values,
        ...Object.fromEntries(variants.map((v, i) => [`v${i}`, v])),
      }),
    );
    return rows.find((row) => row.phone_number === e164) ?? rows[0];
  };
}

const contactByPhone = bySpellings<ContactsTable>((db, p, phones) =>
  db.selectFrom("contacts").selectAll()
    .where("account_id", "=", p("accountId"))
    .where("phone_number", "in", phones)
);

/**
 * Finds the contact of an E.164 number, also under its Argentine spelling
 * with or without the mobile `9`; the exact spelling wins.
 */
export async function findContactByPhone(
  db: Executor,
  accountId: string,
  e164: string,
): Promise<Contact | undefined> {
  const r = await contactByPhone(db, e164, { accountId });
  return r ? toContact(r) : undefined;
}

/** A send's recipient: its contact and, when it has one, its conversation on the channel. */
export interface ContactOnChannel {
  contact: Contact;
  conversation:
    | {
      id: string;
      serviceWindowExpiresAt: string | null;
      assignedTo: string | null;
    }
    | undefined;
}

/** The contacts of an account, each with its conversation on a channel (unique per contact and channel). */
function contactsOnChannel(db: Executor, p: (name: string) => string) {
  return db.selectFrom("contacts as ct")
    .leftJoin(
      "conversations as cv",
      (join) =>
        join.onRef("cv.contact_id", "=", "ct.id")
          .on("cv.channel_id", "=", p("channelId"))
          .on("cv.account_id", "=", p("accountId")),
    )
    .selectAll("ct")
    .select([
      "cv.id as conversation_id",
      "cv.service_window_expires_at as conversation_window",
      "cv.assigned_to as conversation_assigned_to",
    ])
    .where("ct.account_id", "=", p("accountId"));
}

type ContactOnChannelRow = ContactsTable & {
  conversation_id: string | null;
  conversation_window: string | null;
  conversation_assigned_to: string | null;
};

const onChannelByUserId = prepared<string, ContactOnChannelRow>((db, p) =>
  contactsOnChannel(db, p).where("ct.user_id", "=", p("userId"))
);

const onChannelByPhone = bySpellings<ContactOnChannelRow>((db, p, phones) =>
  contactsOnChannel(db, p).where("ct.phone_number", "in", phones)
);

function toContactOnChannel(r: ContactOnChannelRow): ContactOnChannel {
  return {
    contact: toContact(r),
    conversation: r.conversation_id === null ? undefined : {
      id: r.conversation_id,
      serviceWindowExpiresAt: r.conversation_window,
      assignedTo: r.conversation_assigned_to,
    },
  };
}

/**
 * findContactByPhone (or findContactByUserId with `userId`) and the
 * contact's conversation on `channelId`, in one statement: what a send
 * reads of its recipient.
 */
export async function findContactOnChannel(
  db: Executor,
  input: {
    accountId: string;
    channelId: string;
    e164: string | null;
    userId: string | null;
  },
): Promise<ContactOnChannel | undefined> {
  const { accountId, channelId, e164, userId } = input;
  if (userId !== null) {
    const { rows } = await executeCompiled(
      db,
      onChannelByUserId(db, { accountId, channelId, userId }),
    );
    return rows[0] ? toContactOnChannel(rows[0]) : undefined;
  }
  const r = await onChannelByPhone(db, e164!, { accountId, channelId });
  return r ? toContactOnChannel(r) : undefined;
}

/** Finds the contact of a BSUID, matched exactly as Meta sent it. */
export async function findContactByUserId(
  db: Executor,
  accountId: string,
  userId: string,
): Promise<Contact | undefined> {
  const r = await db.selectFrom("contacts").selectAll()
    .where("account_id", "=", accountId).where("user_id", "=", userId)
    .executeTakeFirst();
  return r ? toContact(r) : undefined;
}

/** Sets identity fields of a contact (only the given ones). */
export async function setContactIdentity(
  db: Executor,
  id: string,
  patch: {
    phoneNumber?: string | null;
    userId?: string | null;
    parentUserId?: string | null;
    username?: string | null;
    name?: string | null;
    updatedAt: string;
  },
): Promise<void> {
  const set: Partial<ContactsTable> = { updated_at: patch.updatedAt };
  if (patch.phoneNumber !== undefined) set.phone_number = patch.phoneNumber;
  if (patch.userId !== undefined) set.user_id = patch.userId;
  if (patch.parentUserId !== undefined) {
    set.parent_user_id = patch.parentUserId;
  }
  if (patch.username !== undefined) set.username = patch.username;
  if (patch.name !== undefined) set.name = patch.name;
  await db.updateTable("contacts").set(set).where("id", "=", id).execute();
}

// `!` escapes LIKE wildcards in user text.
function likePattern(text: string): string {
  return `%${text.replace(/[!%_]/g, (ch) => `!${ch}`)}%`;
}

/** The filtered list query without columns or order (shared by rows, count and the plan test). */
export function contactListQuery(
  db: Executor,
  filter: ContactFilter,
): SelectQueryBuilder<Database, "contacts", object> {
  let q = db.selectFrom("contacts").where("account_id", "=", filter.accountId);
  const search = filter.search;
  if (search) {
    // SQLite's LIKE ignores ASCII case.
    const pattern = likePattern(search);
    const digits = phoneSearchDigits(search);
    q = q.where((eb) =>
      eb.or([
        sql<boolean>`contacts.name like ${pattern} escape '!'`,
        sql<boolean>`contacts.email like ${pattern} escape '!'`,
        sql<boolean>`contacts.phone_number like ${pattern} escape '!'`,
        sql<boolean>`contacts.username like ${pattern} escape '!'`,
        sql<boolean>`contacts.user_id = ${search.trim()}`,
        ...(digits
          ? [sql<boolean>`contacts.phone_number like ${likePattern(digits)}`]
          : []),
      ])
    );
  }
  const tag = filter.tag;
  if (tag) {
    q = q.where(
      sql<
        boolean
      >`exists (select 1 from json_each(contacts.tags) where json_each.value = ${tag})`,
    );
  }
  return q;
}

/** The page query exactly as the list endpoint runs it (the plan test checks its index). */
export function contactPageQuery(
  db: Executor,
  filter: ContactFilter & { limit: number; offset: number },
) {
  return contactListQuery(db, filter).selectAll()
    .orderBy("created_at", "desc").orderBy("id", "desc")
    .limit(filter.limit).offset(filter.offset);
}

/** One page of contacts, newest first (created_at, then id), plus the total count. */
export async function listContacts(
  db: Executor,
  filter: ContactFilter & { limit: number; offset: number },
): Promise<{ items: Contact[]; total: number }> {
  const rows = await contactPageQuery(db, filter).execute();
  const count = await contactListQuery(db, filter)
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return { items: rows.map(toContact), total: Number(count.n) };
}

export interface ContactPatch {
  phoneNumber?: string;
  name?: string | null;
  email?: string | null;
  tags?: string[];
  customFields?: CustomFields;
  optedIn?: boolean;
  lastMessageAt?: string | null;
  updatedAt: string;
}

/** Updates a contact's fields; false when the new phone number is already taken. */
export async function updateContact(
  db: Executor,
  id: string,
  patch: ContactPatch,
): Promise<boolean> {
  const set: Partial<ContactsTable> = { updated_at: patch.updatedAt };
  if (patch.phoneNumber !== undefined) set.phone_number = patch.phoneNumber;
  if (patch.name !== undefined) set.name = patch.name;
  if (patch.email !== undefined) set.email = patch.email;
  if (patch.tags !== undefined) set.tags = toJson(patch.tags);
  if (patch.customFields !== undefined) {
    set.custom_fields = toJson(patch.customFields);
  }
  if (patch.optedIn !== undefined) set.opted_in = patch.optedIn ? 1 : 0;
  if (patch.lastMessageAt !== undefined) {
    set.last_message_at = patch.lastMessageAt;
  }
  try {
    await db.updateTable("contacts").set(set).where("id", "=", id).execute();
  } catch (err) {
    if (isUniqueViolation(err)) return false;
    throw err;
  }
  return true;
}

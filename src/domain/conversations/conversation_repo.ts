// Conversations as the API reads them: always joined with their contact and
// narrowed to what the viewer may see.
import { type ExpressionBuilder, sql } from "kysely";
import { prepared } from "../../db/prepared.ts";
import type {
  ContactsTable,
  ConversationsTable,
  Database,
  Executor,
} from "../../db/schema.ts";
import type { CursorPosition } from "../pagination.ts";
import type { MessageDirection } from "../messages/message.ts";
import { toMessageStatus } from "../messages/message.ts";
import type { Referral } from "../messages/message_details.ts";
import { fromJson } from "../../db/json.ts";
import type { Contact } from "../contacts/contact.ts";
import type {
  Conversation,
  ConversationStatus,
  Viewer,
} from "./conversation.ts";

type Joined = Database & { cv: ConversationsTable; ct: ContactsTable };

interface ConversationRow extends ConversationsTable {
  contact_phone_number: string | null;
  contact_user_id: string | null;
  contact_username: string | null;
  contact_name: string | null;
}

export function toConversation(r: ConversationRow): Conversation {
  return {
    id: r.id,
    contactId: r.contact_id,
    phoneNumberId: r.channel_id,
    status: r.status as ConversationStatus,
    assignedTo: r.assigned_to,
    lastMessageAt: r.last_message_at,
    lastMessagePreview: r.last_message_preview,
    lastMessageDirection: r.last_message_direction as MessageDirection | null,
    lastMessageStatus: r.last_message_status === null
      ? null
      : toMessageStatus(r.last_message_status),
    serviceWindowExpiresAt: r.service_window_expires_at,
    unreadCount: r.unread_count,
    createdAt: r.created_at,
    contact: {
      id: r.contact_id,
      phoneNumber: r.contact_phone_number,
      userId: r.contact_user_id,
      username: r.contact_username,
      name: r.contact_name,
    },
    referral: r.referral ? fromJson<Referral | null>(r.referral, null) : null,
  };
}

/**
 * Conversations of the viewer's account (and only the agent's, for
 * `assigned` agents), with contact fields. `byContact`: the caller narrows
 * to given contacts, so the account's test is written `+cv.account_id`
 * (SQLite then uses no index for it): without statistics SQLite would walk
 * the account's list or status index and test every conversation of the
 * account against the contacts (33 ms for a batch of 100 known recipients
 * among 32,000 conversations, against 2 through the contact's index).
 */
function visibleConversations(
  db: Executor,
  viewer: Viewer,
  options: { byContact?: boolean } = {},
) {
  let query = db.selectFrom("conversations as cv")
    .innerJoin("contacts as ct", "ct.id", "cv.contact_id")
    .selectAll("cv")
    .select([
      "ct.phone_number as contact_phone_number",
      "ct.user_id as contact_user_id",
      "ct.username as contact_username",
      "ct.name as contact_name",
    ])
    .where(
      options.byContact ? sql<string>`+cv.account_id` : "cv.account_id",
      "=",
      viewer.accountId,
    );
  if (viewer.onlyAssignedTo !== undefined) {
    query = query.where("cv.assigned_to", "=", viewer.onlyAssignedTo);
  }
  return query;
}

/** Keyset condition for newest-first lists: strictly after `position` in (created_at, id) desc order. */
function before(position: CursorPosition) {
  return (eb: ExpressionBuilder<Joined, "cv">) =>
    eb(
      eb.refTuple("cv.created_at", "cv.id"),
      "<",
      eb.tuple(position.at, position.id),
    );
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/**
 * A case-insensitive part of the contact's name or username, a part of its
 * phone (`+` optional), its whole BSUID, and with `email` a part of its
 * e-mail.
 */
function searchCondition(search: string, options: { email?: boolean } = {}) {
  const pattern = `%${escapeLike(search.toLowerCase())}%`;
  const digits = search.replace(/[\s\-().+]/g, "");
  const like = (column: "ct.name" | "ct.username" | "ct.email") =>
    sql<boolean>`lower(${sql.ref(column)}) like ${pattern} escape '\\'`;
  return (eb: ExpressionBuilder<Joined, "cv" | "ct">) =>
    eb.or([
      like("ct.name"),
      like("ct.username"),
      ...(options.email ? [like("ct.email")] : []),
      eb("ct.user_id", "=", search.trim()),
      ...(/^\d+$/.test(digits)
        ? [eb("ct.phone_number", "like", `%${digits}%`)]
        : []),
    ]);
}

export interface ListConversationsInput {
  viewer: Viewer;
  status?: ConversationStatus;
  /** Case-insensitive substring of the contact's name, username or phone (`+` optional), or an exact BSUID. */
  search?: string;
  after?: CursorPosition;
  limit: number;
}

/**
 * The list query, newest first on (created_at, id); built separately so a
 * test can check its plan uses conversations_list_idx / conversations_status_idx.
 */
export function listConversationsQuery(
  db: Executor,
  input: ListConversationsInput,
) {
  let query = visibleConversations(db, input.viewer);
  if (input.status) query = query.where("cv.status", "=", input.status);
  if (input.search) query = query.where(searchCondition(input.search));
  const after = input.after;
  if (after) query = query.where(before(after));
  return query.orderBy("cv.created_at", "desc").orderBy("cv.id", "desc")
    .limit(input.limit);
}

/** The panel's filters on top of the list's. */
export interface InboxFilter {
  status?: ConversationStatus;
  /** An agent id, or null for unassigned. */
  assignedTo?: string | null;
  unread?: boolean;
  /** Open windows closing within [from, to). */
  windowClosing?: { from: string; to: string };
  /** Part of the contact's name, username, phone or e-mail. */
  search?: string;
}

/** Activity of a conversation: its last message, or its creation before any. */
const ACTIVITY = sql<string>`coalesce(cv.last_message_at, cv.created_at)`;

/**
 * The panel's inbox: newest activity first, keyset-paginated on (activity,
 * id) through conversations_activity_idx (migration 0019), with the
 * panel's filters.
 */
export function inboxQuery(
  db: Executor,
  input: {
    viewer: Viewer;
    filter: InboxFilter;
    after?: CursorPosition;
    limit: number;
  },
) {
  const { filter } = input;
  let query = visibleConversations(db, input.viewer).select(
    ACTIVITY.as("activity"),
  );
  if (filter.status) query = query.where("cv.status", "=", filter.status);
  if (filter.assignedTo !== undefined) {
    query = query.where(
      "cv.assigned_to",
      filter.assignedTo === null ? "is" : "=",
      filter.assignedTo,
    );
  }
  if (filter.unread) query = query.where("cv.unread_count", ">", 0);
  const closing = filter.windowClosing;
  if (closing) {
    query = query.where("cv.service_window_expires_at", ">", closing.from)
      .where("cv.service_window_expires_at", "<=", closing.to);
  }
  if (filter.search) {
    query = query.where(searchCondition(filter.search, { email: true }));
  }
  const after = input.after;
  if (after) {
    query = query.where((eb) =>
      eb(
        eb.tuple(ACTIVITY, eb.ref("cv.id")),
        "<",
        eb.tuple(after.at, after.id),
      )
    );
  }
  return query.orderBy(ACTIVITY, "desc").orderBy("cv.id", "desc")
    .limit(input.limit);
}

export async function listInbox(
  db: Executor,
  input: Parameters<typeof inboxQuery>[1],
): Promise<(Conversation & { activity: string })[]> {
  const rows = await inboxQuery(db, input).execute();
  return rows.map((r) => ({ ...toConversation(r), activity: r.activity }));
}

export async function listConversations(
  db: Executor,
  input: ListConversationsInput,
): Promise<Conversation[]> {
  const rows = await listConversationsQuery(db, input).execute();
  return rows.map(toConversation);
}

export interface ListContactConversationsInput {
  viewer: Viewer;
  contactId: string;
  after?: CursorPosition;
  limit: number;
}

/**
 * A contact's conversations newest first: found through the unique
 * (contact_id, channel_id) index and sorted, at most one per channel the
 * account has had (a conversation whose channel goes keeps a null one).
 */
export function listContactConversationsQuery(
  db: Executor,
  input: ListContactConversationsInput,
) {
  let query = visibleConversations(db, input.viewer, { byContact: true })
    .where("cv.contact_id", "=", input.contactId);
  const after = input.after;
  if (after) query = query.where(before(after));
  return query.orderBy("cv.created_at", "desc").orderBy("cv.id", "desc")
    .limit(input.limit);
}

export async function listContactConversations(
  db: Executor,
  input: ListContactConversationsInput,
): Promise<Conversation[]> {
  const rows = await listContactConversationsQuery(db, input).execute();
  return rows.map(toConversation);
}

// A new conversation is read back by id on every first send: compiled once.
const conversationById = prepared<"accountId" | "id", ConversationRow>((
  db,
  p,
) =>
  visibleConversations(db, { accountId: p("accountId") }).where(
    "cv.id",
    "=",
    p("id"),
  )
);

export async function findConversation(
  db: Executor,
  viewer: Viewer,
  id: string,
): Promise<Conversation | undefined> {
  if (viewer.onlyAssignedTo === undefined) {
    const { rows } = await db.executeQuery(
      conversationById(db, { accountId: viewer.accountId, id }),
    );
    return rows[0] ? toConversation(rows[0]) : undefined;
  }
  const row = await visibleConversations(db, viewer).where("cv.id", "=", id)
    .executeTakeFirst();
  return row ? toConversation(row) : undefined;
}

/**
 * Conversations whose contact matches any of the given identifiers, best
 * first: on a preferred channel, then by last message, then by creation.
 * (NULLs sort lowest in SQLite, so `desc` puts never-messaged ones last.)
 */
export async function findMatchingConversations(
  db: Executor,
  input: {
    viewer: Viewer;
    phones?: string[];
    /** A BSUID, matched whole. */
    userId?: string;
    email?: string;
    /** Already normalised: no leading `@`, lower case. */
    instagram?: string;
    preferredChannelIds?: string[];
    limit: number;
  },
): Promise<Conversation[]> {
  const { phones, email, instagram } = input;
  const preferred = input.preferredChannelIds ?? [];
  let query = visibleConversations(db, input.viewer).where((eb) =>
    eb.or([
      ...(phones?.length ? [eb("ct.phone_number", "in", phones)] : []),
      ...(input.userId !== undefined
        ? [eb("ct.user_id", "=", input.userId)]
        : []),
      ...(email !== undefined
        ? [sql<boolean>`lower(${eb.ref("ct.email")}) = ${email.toLowerCase()}`]
        : []),
      ...(instagram !== undefined
        ? [
          sql<
            boolean
          >`lower(ltrim(json_extract(${
            eb.ref("ct.custom_fields")
          }, '$.instagram'), '@')) = ${instagram}`,
        ]
        : []),
    ])
  );
  if (preferred.length > 0) {
    query = query.orderBy(
      (eb) =>
        eb.case().when("cv.channel_id", "in", preferred).then(1).else(0).end(),
      "desc",
    );
  }
  const rows = await query.orderBy("cv.last_message_at", "desc")
    .orderBy("cv.created_at", "desc").orderBy("cv.id", "desc")
    .limit(input.limit).execute();
  return rows.map(toConversation);
}

/** The assignee now of each of these conversations of the account (one statement). */
export async function conversationAssignees(
  db: Executor,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, string | null>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom("conversations")
    .select(["id", "assigned_to"])
    .where("account_id", "=", accountId)
    .where("id", "in", [...ids]).execute();
  return new Map(rows.map((r) => [r.id, r.assigned_to]));
}

/** Whether a conversation of this contact is visible to the viewer. */
export async function contactHasVisibleConversation(
  db: Executor,
  viewer: Viewer,
  contactId: string,
): Promise<boolean> {
  const row = await visibleConversations(db, viewer, { byContact: true })
    .where("cv.contact_id", "=", contactId).executeTakeFirst();
  return row !== undefined;
}

export async function contactExists(
  db: Executor,
  accountId: string,
  contactId: string,
): Promise<boolean> {
  const row = await db.selectFrom("contacts").select("id")
    .where("id", "=", contactId).where("account_id", "=", accountId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function updateConversation(
  db: Executor,
  id: string,
  patch: Partial<Pick<ConversationsTable, "status" | "assigned_to">> & {
    updated_at: string;
  },
): Promise<void> {
  await db.updateTable("conversations").set(patch).where("id", "=", id)
    .execute();
}

// Every send looks its conversation up: compiled once.
const conversationOnChannel = prepared<
  "accountId" | "contactId" | "channelId",
  ConversationRow
>((db, p) =>
  visibleConversations(db, { accountId: p("accountId") })
    .where("cv.contact_id", "=", p("contactId"))
    .where("cv.channel_id", "=", p("channelId"))
    // No LIMIT: (contact, channel) is unique, and with `limit ?` SQLite
    // sorts through a slower path (190 us against 30 us measured).
    .orderBy("cv.created_at").orderBy("cv.id")
);

/** The conversation of a contact on a channel (null channel included). */
export async function findConversationForContact(
  db: Executor,
  input: { accountId: string; contactId: string; channelId: string | null },
): Promise<Conversation | undefined> {
  if (input.channelId !== null) {
    const { rows } = await db.executeQuery(conversationOnChannel(db, {
      accountId: input.accountId,
      contactId: input.contactId,
      channelId: input.channelId,
    }));
    return rows[0] ? toConversation(rows[0]) : undefined;
  }
  const row = await visibleConversations(db, { accountId: input.accountId })
    .where("cv.contact_id", "=", input.contactId)
    .where(
      "cv.channel_id",
      input.channelId === null ? "is" : "=",
      input.channelId,
    )
    .orderBy("cv.created_at").orderBy("cv.id")
    .executeTakeFirst();
  return row ? toConversation(row) : undefined;
}

// A batch looks up the conversations of all its known recipients at once.
// It has read their contacts already: no join, which cost a contacts lookup
// by id per conversation. `+cv.account_id`: see visibleConversations().
const conversationsOfContacts = prepared<
  "accountId" | "contactIds",
  ConversationsTable
>((db, p) =>
  db.selectFrom("conversations as cv").selectAll("cv")
    .where(sql<string>`+cv.account_id`, "=", p("accountId"))
    .where(
      "cv.contact_id",
      "in",
      sql<string>`(select value from json_each(${p("contactIds")}))`,
    )
);

/** The statement of findConversationsOfContacts (the plan test reads it). */
export function conversationsOfContactsQuery(
  db: Executor,
  accountId: string,
  contactIds: readonly string[],
) {
  return conversationsOfContacts(db, {
    accountId,
    contactIds: JSON.stringify(contactIds),
  });
}

/** Every conversation (any channel) of these contacts of the account, in one statement. */
export async function findConversationsOfContacts(
  db: Executor,
  accountId: string,
  contacts: readonly Contact[],
): Promise<Conversation[]> {
  if (contacts.length === 0) return [];
  const byId = new Map(contacts.map((c) => [c.id, c]));
  const { rows } = await db.executeQuery(
    conversationsOfContactsQuery(db, accountId, [...byId.keys()]),
  );
  return rows.map((r) => {
    const contact = byId.get(r.contact_id)!;
    return toConversation({
      ...r,
      contact_phone_number: contact.phoneNumber,
      contact_user_id: contact.userId,
      contact_username: contact.username,
      contact_name: contact.name,
    });
  });
}

/** The last time a customer wrote on any of these channels (doctor); null when never. */
export async function lastInboundAt(
  db: Executor,
  channelIds: readonly string[],
): Promise<string | null> {
  if (channelIds.length === 0) return null;
  const r = await db.selectFrom("conversations")
    .select((eb) => eb.fn.max("last_inbound_at").as("at"))
    .where("channel_id", "in", channelIds).executeTakeFirst();
  return (r?.at as string | null | undefined) ?? null;
}

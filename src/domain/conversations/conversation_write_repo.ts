// Write side of conversations for the messaging engine: every function runs
// in the caller's transaction, next to the message row it is about.
import { sql } from "kysely";
import type { ConversationsTable, Executor } from "../../db/schema.ts";
import { insertRows, jsonQuery } from "../../db/bulk.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import { insertRow, prepared } from "../../db/prepared.ts";
import {
  type Conversation,
  SERVICE_WINDOW_HOURS,
  truncatePreview,
} from "./conversation.ts";
import type { Contact } from "../contacts/contact.ts";
import { toConversation } from "./conversation_repo.ts";
import { executeRaw } from "../../db/raw.ts";
import { rowsUnchanged, rowUnchanged } from "../../db/row_guard.ts";

/** The row of a new open conversation without messages, created at `at`. */
export function openConversationRow(input: {
  id: string;
  accountId: string;
  contactId: string;
  channelId: string | null;
  at: string;
}): ConversationsTable {
  return {
    id: input.id,
    account_id: input.accountId,
    contact_id: input.contactId,
    channel_id: input.channelId,
    status: "open",
    assigned_to: null,
    last_message_at: null,
    last_message_preview: null,
    last_message_direction: null,
    last_message_status: null,
    last_message_id: null,
    last_inbound_at: null,
    service_window_expires_at: null,
    unread_count: 0,
    referral: null,
    created_at: input.at,
    updated_at: input.at,
  };
}

/**
 * The new open conversation of `contact` on a channel, as findConversation
 * reads it once openConversationRow() of the same `id` is in (no read back).
 */
export function openConversation(input: {
  id: string;
  accountId: string;
  contact: Contact;
  channelId: string | null;
  at: string;
}): Conversation {
  const { contact } = input;
  return toConversation({
    ...openConversationRow({ ...input, contactId: contact.id }),
    contact_phone_number: contact.phoneNumber,
    contact_user_id: contact.userId,
    contact_username: contact.username,
    contact_name: contact.name,
  });
}

/** Inserts unless (contact, channel) already has one; true when inserted. */
export async function insertConversation(
  db: Executor,
  row: ConversationsTable,
): Promise<boolean> {
  // The changed-row count tells, without a RETURNING round trip.
  const result = await db.executeQuery(
    insertRow(
      "conversations",
      row,
      "on conflict (contact_id, channel_id) do nothing",
    ),
  );
  return Number(result.numAffectedRows ?? 0) > 0;
}

/**
 * Inserts many conversations (one statement for a batch); the caller has checked, in
 * its write transaction, that none of their (contact, channel) exists yet.
 */
export async function insertConversations(
  db: Executor,
  rows: readonly ConversationsTable[],
): Promise<void> {
  await insertRows(db, "conversations", rows);
}

/**
 * `value` when the message at `at` is at least as recent as the current
 * last message, else the column unchanged: a late, out-of-order message
 * never replaces a newer last message.
 */
function ifNewest(at: string, column: string, value: string | null) {
  return sql<string | null>`case when coalesce(last_message_at, '') <= ${at}
    then ${value} else ${sql.ref(column)} end`;
}

/**
 * Records an inbound message: last message fields (when newest), last
 * inbound time and the service window (never moved backwards), one more
 * unread, and a resolved or closed conversation reopens. False when no such
 * conversation exists.
 */
export async function recordInbound(
  db: Executor,
  input: {
    conversationId: string;
    messageId: string;
    preview: string | null;
    at: Date;
    windowHours?: number;
  },
): Promise<boolean> {
  const at = toDbTime(input.at);
  const expires = toDbTime(
    addMs(input.at, (input.windowHours ?? SERVICE_WINDOW_HOURS) * 3_600_000),
  );
  const result = await db.updateTable("conversations").set({
    last_message_id: ifNewest(at, "last_message_id", input.messageId),
    last_message_preview: ifNewest(
      at,
      "last_message_preview",
      truncatePreview(input.preview),
    ),
    last_message_direction: ifNewest(at, "last_message_direction", "inbound"),
    last_message_status: ifNewest(at, "last_message_status", "received"),
    // SQLite evaluates every SET expression on the row as it was before.
    last_message_at: sql`max(coalesce(last_message_at, ''), ${at})`,
    last_inbound_at: sql`max(coalesce(last_inbound_at, ''), ${at})`,
    service_window_expires_at:
      sql`max(coalesce(service_window_expires_at, ''), ${expires})`,
    unread_count: sql`unread_count + 1`,
    status: sql`case when status in ('resolved', 'closed') then 'open'
      else status end`,
    updated_at: sql`max(updated_at, ${at})`,
  }).where("id", "=", input.conversationId).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * The SET of recordOutbound: `?1` is the message time; the last-message
 * fields take the given values only when the message is at least as recent
 * as the current last message.
 */
function outboundSet(messageId: string, preview: string, status: string) {
  return `last_message_id = case when coalesce(last_message_at, '') <= ?1
    then ${messageId} else last_message_id end,
  last_message_preview = case when coalesce(last_message_at, '') <= ?1
    then ${preview} else last_message_preview end,
  last_message_direction = case when coalesce(last_message_at, '') <= ?1
    then 'outbound' else last_message_direction end,
  last_message_status = case when coalesce(last_message_at, '') <= ?1
    then ${status} else last_message_status end,
  last_message_at = max(coalesce(last_message_at, ''), ?1),
  updated_at = max(updated_at, ?1)`;
}

// recordOutbound runs on every send: written once as SQL, not built per call.
const RECORD_OUTBOUND_SQL = `update conversations set
  ${outboundSet("?2", "?3", "?4")}
  where id = ?5`;

/** Records an outbound message as the last message (when newest). */
export async function recordOutbound(
  db: Executor,
  input: {
    conversationId: string;
    messageId: string;
    preview: string | null;
    status: string;
    at: Date;
  },
): Promise<boolean> {
  const result = await executeRaw(db, RECORD_OUTBOUND_SQL, [
    toDbTime(input.at),
    input.messageId,
    truncatePreview(input.preview),
    input.status,
    input.conversationId,
  ]);
  return Number(result.numAffectedRows ?? 0) > 0;
}

// recordOutbound for many conversations at one time, in one statement: `?2`
// the status, `?3` the JSON rows [id, message id, preview].
const RECORD_OUTBOUND_MANY_SQL = `update conversations set
  ${outboundSet("v.message_id", "v.preview", "?2")}
  from (select value ->> 0 as id, value ->> 1 as message_id,
    value ->> 2 as preview from json_each(?3)) as v
  where conversations.id = v.id`;

/** recordOutbound() of one message in each of many conversations, all at `at`. */
export async function recordOutboundMany(
  db: Executor,
  input: {
    status: string;
    at: Date;
    last: readonly {
      conversationId: string;
      messageId: string;
      preview: string | null;
    }[];
  },
): Promise<void> {
  if (input.last.length === 0) return;
  await db.executeQuery(jsonQuery(
    RECORD_OUTBOUND_MANY_SQL,
    input.last.map((l) => [
      l.conversationId,
      l.messageId,
      // Well formed, as a bound parameter would be stored (see db/bulk.ts).
      truncatePreview(l.preview)?.toWellFormed() ?? null,
    ]),
    toDbTime(input.at),
    input.status,
  ));
}

/** Mirrors a message's new status on the conversation, only while it is the last message. */
// Every status change of a message runs it: compiled once.
const lastMessageStatus = prepared<
  "status" | "conversationId" | "messageId",
  never
>((db, p) =>
  db.updateTable("conversations")
    .set({ last_message_status: p("status") })
    .where("id", "=", p("conversationId"))
    .where("last_message_id", "=", p("messageId"))
);

export async function updateLastMessageStatus(
  db: Executor,
  input: { conversationId: string; messageId: string; status: string },
): Promise<boolean> {
  const result = await db.executeQuery(lastMessageStatus(db, input));
  return Number(result.numAffectedRows) > 0;
}

/** Keeps the click-to-WhatsApp ad (JSON) that last brought the customer. */
export async function setReferral(
  db: Executor,
  conversationId: string,
  referral: string,
): Promise<void> {
  await db.updateTable("conversations").set({ referral })
    .where("id", "=", conversationId).execute();
}

/** Shows a message's new text on the conversation, only while it is the last message. */
export async function updateLastMessagePreview(
  db: Executor,
  input: { conversationId: string; messageId: string; preview: string | null },
): Promise<void> {
  await db.updateTable("conversations")
    .set({ last_message_preview: truncatePreview(input.preview) })
    .where("id", "=", input.conversationId)
    .where("last_message_id", "=", input.messageId).execute();
}

/** Sets unreadCount to 0 (the read operations); true when it was not 0. */
export async function resetUnread(
  db: Executor,
  conversationId: string,
): Promise<boolean> {
  const result = await db.updateTable("conversations")
    .set({ unread_count: 0 }).where("id", "=", conversationId)
    .where("unread_count", ">", 0)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** The later of a nullable time column and a value; null when both are. */
function laterOf(column: string, value: string | null) {
  return sql<string | null>`nullif(max(coalesce(${sql.ref(column)}, ''), ${
    value ?? ""
  }), '')`;
}

/**
 * Hands every conversation and message of contact `from` to contact `to`
 * (two identities found to be one person). Where both have a conversation
 * on the same channel the messages move into `to`'s and the two summaries
 * combine: the newest last message, the later window, the unread counts
 * added. With `writes` (an atomic unit's: src/db/planned_writes.ts), it
 * reads on `db` and writes there.
 */
export async function moveContactConversations(
  db: Executor,
  input: { from: string; to: string; writes?: Executor },
): Promise<void> {
  const w = input.writes ?? db;
  const mine = await db.selectFrom("conversations").selectAll()
    .where("contact_id", "=", input.from).execute();
  for (const old of mine) {
    const target = await db.selectFrom("conversations").selectAll()
      .where("contact_id", "=", input.to)
      .where((eb) =>
        old.channel_id === null
          ? eb("channel_id", "is", null)
          : eb("channel_id", "=", old.channel_id)
      ).executeTakeFirst();
    if (!target) {
      await w.updateTable("conversations").set({ contact_id: input.to })
        .where("id", "=", old.id).execute();
      continue;
    }
    await w.updateTable("messages").set({ conversation_id: target.id })
      .where("conversation_id", "=", old.id).execute();
    const newer = (old.last_message_at ?? "") > (target.last_message_at ?? "");
    await w.updateTable("conversations").set({
      ...(newer
        ? {
          last_message_at: old.last_message_at,
          last_message_preview: old.last_message_preview,
          last_message_direction: old.last_message_direction,
          last_message_status: old.last_message_status,
          last_message_id: old.last_message_id,
        }
        : {}),
      last_inbound_at: laterOf("last_inbound_at", old.last_inbound_at),
      service_window_expires_at: laterOf(
        "service_window_expires_at",
        old.service_window_expires_at,
      ),
      unread_count: sql`unread_count + ${old.unread_count}`,
      referral: target.referral ?? old.referral,
    }).where("id", "=", target.id).execute();
    await w.deleteFrom("conversations").where("id", "=", old.id).execute();
  }
  await w.updateTable("messages").set({ contact_id: input.to })
    .where("contact_id", "=", input.from).execute();
}

/**
 * A guard (src/db/atomic.ts expectRow) that the conversations of these
 * contacts stay as they are now: read here, then checked in the batch.
 */
export async function contactConversationsUnchanged(
  db: Executor,
  contactIds: readonly string[],
) {
  const rows = await db.selectFrom("conversations").selectAll()
    .where("contact_id", "in", [...contactIds]).execute();
  return rowsUnchanged(
    "conversations",
    { column: "contact_id", values: contactIds },
    rows,
  );
}

/** A guard (src/db/atomic.ts expectRow) that the conversation still exists. */
export function conversationExists(id: string) {
  return rowUnchanged("conversations", { id }, []);
}

/**
 * A guard that the conversation's status and assignee are still as
 * `conversation` shows them.
 */
export function assignmentUnchanged(
  conversation: { id: string; status: string; assignedTo: string | null },
) {
  return rowUnchanged("conversations", {
    id: conversation.id,
    status: conversation.status,
    assigned_to: conversation.assignedTo,
  });
}

import { CompiledQuery } from "kysely";
import type { Executor, MessagesTable } from "../../db/schema.ts";
import { toJson } from "../../db/json.ts";
import { insertRows } from "../../db/bulk.ts";
import { insertRow, prepared } from "../../db/prepared.ts";
import { executeCompiled } from "../../db/raw.ts";
import { rowUnchanged, sameRow } from "../../db/row_guard.ts";
import type { RawBuilder } from "kysely";
import type {
  Message,
  MessageDirection,
  MessageLane,
  StoredMessageStatus,
} from "./message.ts";
import { parseDetails } from "./message_details.ts";
import { addQueuedBatch } from "./send_repo.ts";

export type MessageRow = MessagesTable;

/**
 * Inserts message rows, many in one statement (db/bulk.ts): no query
 * building per send. Every message row is written here or in
 * insertMessage(): the queued batch rows are added to their channel's
 * backlog counter here (migration 0014), one statement per channel instead
 * of a trigger per row.
 */
export async function insertMessages(
  db: Executor,
  messages: Message[],
): Promise<void> {
  await insertRows(db, "messages", messages.map(toMessageRow));
  const queued = new Map<string, number>();
  for (const m of messages) {
    // What counts, as the update and delete triggers of migration 0010 read it.
    if (m.lane === "batch" && m.status === "queued" && m.channelId !== null) {
      queued.set(m.channelId, (queued.get(m.channelId) ?? 0) + 1);
    }
  }
  for (const [channelId, n] of queued) await addQueuedBatch(db, channelId, n);
}

// Every send job and status callback reads its message: compiled once.
const messageById = prepared<"id", MessageRow>((db, p) =>
  db.selectFrom("messages").selectAll().where("id", "=", p("id"))
);
/** A message with what its send needs of its contact (null: the contact is gone). */
export type MessageToSend = MessageRow & {
  recipient_id: string | null;
  recipient_phone_number: string | null;
  recipient_user_id: string | null;
};

// Every send job reads its message with its recipient, in one statement.
const messageToSend = prepared<"id", MessageToSend>((db, p) =>
  db.selectFrom("messages as m")
    .leftJoin(
      "contacts as c",
      (join) =>
        join.onRef("c.id", "=", "m.contact_id")
          .onRef("c.account_id", "=", "m.account_id"),
    )
    .selectAll("m")
    .select([
      "c.id as recipient_id",
      "c.phone_number as recipient_phone_number",
      "c.user_id as recipient_user_id",
    ])
    .where("m.id", "=", p("id"))
);
const messageByWamid = prepared<"wamid", MessageRow>((db, p) =>
  db.selectFrom("messages").selectAll().where("wa_message_id", "=", p("wamid"))
);

export async function findMessageById(
  db: Executor,
  id: string,
): Promise<MessageRow | undefined> {
  return (await db.executeQuery(messageById(db, { id }))).rows[0];
}

/** A message with its contact's phone number and user id (a send's one read of them). */
export async function findMessageToSend(
  db: Executor,
  id: string,
): Promise<MessageToSend | undefined> {
  return (await db.executeQuery(messageToSend(db, { id }))).rows[0];
}

/** A message of the account; another account's id is not found. */
export async function findAccountMessage(
  db: Executor,
  accountId: string,
  id: string,
): Promise<Message | undefined> {
  const row = await db.selectFrom("messages").selectAll()
    .where("id", "=", id).where("account_id", "=", accountId)
    .executeTakeFirst();
  return row && toMessage(row);
}

export async function findMessageByWamid(
  db: Executor,
  wamid: string,
): Promise<MessageRow | undefined> {
  return (await db.executeQuery(messageByWamid(db, { wamid }))).rows[0];
}

/**
 * Moves a message from `from` to `to` only if it is still in `from`
 * (optimistic check: a concurrent report cannot be overwritten).
 */
export async function transitionStatus(
  db: Executor,
  id: string,
  change: {
    from: string;
    to: string;
    now: string;
    waMessageId?: string | null;
    errorCode?: string | null;
    errorMessage?: string | null;
  },
): Promise<boolean> {
  const errors = (change.errorCode !== undefined ? 1 : 0) +
    (change.errorMessage !== undefined ? 2 : 0);
  const result = await db.executeQuery(transitionTo[errors]!(db, {
    id,
    from: change.from,
    to: change.to,
    now: change.now,
    errorCode: change.errorCode ?? null,
    errorMessage: change.errorMessage ?? null,
  }));
  if (change.waMessageId) await setWamidIfMissing(db, id, change.waMessageId);
  return Number(result.numAffectedRows) > 0;
}

/**
 * The status update of every send and status callback, compiled once per
 * set of error columns it writes (index: 1 error_code, 2 error_message).
 */
const transitionTo = [0, 1, 2, 3].map((errors) =>
  prepared<
    "id" | "from" | "to" | "now" | "errorCode" | "errorMessage",
    never
  >((db, p) =>
    db.updateTable("messages").set({
      status: p("to"),
      updated_at: p("now"),
      ...(errors & 1 ? { error_code: p("errorCode") } : {}),
      ...(errors & 2 ? { error_message: p("errorMessage") } : {}),
    }).where("id", "=", p("id")).where("status", "=", p("from"))
  )
);

const wamidIfMissing = prepared<"id" | "wamid", never>((db, p) =>
  db.updateTable("messages").set({ wa_message_id: p("wamid") })
    .where("id", "=", p("id")).where("wa_message_id", "is", null)
);

export async function setWamidIfMissing(
  db: Executor,
  id: string,
  wamid: string,
): Promise<void> {
  await db.executeQuery(wamidIfMissing(db, { id, wamid }));
}

export async function setMessageMedia(
  db: Executor,
  id: string,
  media: { mediaId: string; mediaKey: string; now: string },
): Promise<void> {
  await db.updateTable("messages").set({
    media_id: media.mediaId,
    media_key: media.mediaKey,
    updated_at: media.now,
  }).where("id", "=", id).execute();
}

/** The newest inbound message of a conversation that has an upstream id (read receipts, typing). */
export async function latestInboundWithWamid(
  db: Executor,
  conversationId: string,
  since?: string,
): Promise<MessageRow | undefined> {
  let q = db.selectFrom("messages").selectAll()
    .where("conversation_id", "=", conversationId)
    .where("direction", "=", "inbound")
    .where("wa_message_id", "is not", null);
  if (since) q = q.where("created_at", ">=", since);
  return await q.orderBy("created_at", "desc").orderBy("id", "desc").limit(1)
    .executeTakeFirst();
}

/** A message of the account by its upstream id, optionally of one direction only. */
export async function findAccountMessageByWamid(
  db: Executor,
  accountId: string,
  wamid: string,
  options: { direction?: "inbound" | "outbound" } = {},
): Promise<MessageRow | undefined> {
  let q = db.selectFrom("messages").selectAll()
    .where("wa_message_id", "=", wamid).where("account_id", "=", accountId);
  if (options.direction) q = q.where("direction", "=", options.direction);
  return await q.executeTakeFirst();
}

/** A guard (PlannedWrites.expectRow): the message was not written since it was read (its updated_at). */
export function sameMessageVersion(
  message: Pick<Message, "id" | "updatedAt">,
): RawBuilder<unknown> {
  return sameRow("messages", {
    id: message.id,
    updated_at: message.updatedAt,
  });
}

/** Rewrites a message's content and details (a customer's edit or deletion). */
export async function updateMessageDetails(
  db: Executor,
  id: string,
  change: { content?: string; details: string; updatedAt: string },
): Promise<void> {
  await db.updateTable("messages").set({
    ...(change.content !== undefined ? { content: change.content } : {}),
    details: change.details,
    updated_at: change.updatedAt,
  }).where("id", "=", id).execute();
}

/** The row of a message: the one place a message's columns are written out. */
export function toMessageRow(message: Message): MessageRow {
  return {
    id: message.id,
    account_id: message.accountId,
    conversation_id: message.conversationId,
    contact_id: message.contactId,
    channel_id: message.channelId,
    direction: message.direction,
    type: message.type,
    content: toJson(message.content),
    status: message.status,
    wa_message_id: message.waMessageId,
    error_code: message.errorCode,
    error_message: message.errorMessage,
    origin: message.origin,
    sent_by_ai: message.sentByAi ? 1 : 0,
    campaign_id: message.campaignId,
    client_ref: message.clientRef,
    media_id: message.mediaId,
    media_key: message.mediaKey,
    lane: message.lane,
    context_wa_message_id: message.contextWaMessageId,
    upstream_timestamp: message.upstreamAt,
    details: Object.keys(message.details).length
      ? toJson(message.details)
      : null,
    agent_id: message.agentId,
    created_at: message.createdAt,
    updated_at: message.updatedAt,
  };
}

/** Stored content that is not JSON reads as `{}` (the API shows it empty, never fails). */
function parseContent(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return {};
  }
}

/** The message of a row (the inverse of toMessageRow). */
export function toMessage(row: MessageRow): Message {
  return {
    id: row.id,
    accountId: row.account_id,
    conversationId: row.conversation_id,
    contactId: row.contact_id,
    channelId: row.channel_id,
    direction: row.direction as MessageDirection,
    type: row.type,
    content: parseContent(row.content),
    status: row.status as StoredMessageStatus,
    waMessageId: row.wa_message_id,
    errorCode: row.error_code,
    errorMessage: row.error_message,
    origin: row.origin,
    sentByAi: row.sent_by_ai === 1,
    campaignId: row.campaign_id,
    clientRef: row.client_ref,
    mediaId: row.media_id,
    mediaKey: row.media_key,
    lane: row.lane as MessageLane,
    contextWaMessageId: row.context_wa_message_id,
    upstreamAt: row.upstream_timestamp,
    details: parseDetails(row.details),
    agentId: row.agent_id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Inserts one message (every POST /messages, every inbound message): its
 * text written once and run straight on SQLite when it can (db/raw.ts). A
 * queued batch row goes through insertMessages(), which counts it.
 */
export async function insertMessage(
  db: Executor,
  message: Message,
): Promise<void> {
  if (message.lane === "batch") return await insertMessages(db, [message]);
  await executeCompiled(db, insertRow("messages", toMessageRow(message)));
}

/**
 * A query that finds a row while no message has this upstream id (a guard:
 * two workers storing one Meta retry at once store it once).
 */
export function noMessageWithWamid(wamid: string): CompiledQuery<unknown> {
  return CompiledQuery.raw(
    "select 1 where not exists (select 1 from messages where wa_message_id = ?)",
    [wamid],
  );
}

/**
 * A guard (src/db/atomic.ts expectRow) that the message is still in the
 * status `row` shows.
 */
export function statusUnchanged(row: MessageRow): CompiledQuery<unknown> {
  return rowUnchanged("messages", row, ["status"]);
}

/**
 * A guard that the message's contact, content and details are still as
 * `row` shows them (an edit or deletion is made on what was read).
 */
export function contentUnchanged(row: MessageRow): CompiledQuery<unknown> {
  return rowUnchanged("messages", row, ["contact_id", "content", "details"]);
}

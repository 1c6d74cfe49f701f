import { CompiledQuery } from "kysely";
import type { Executor, MessagesTable } from "../../db/schema.ts";

export type MessageRow = MessagesTable;

/** The columns a message from upstream (a customer's, or an echo) leaves at their defaults. */
export const UPSTREAM_ROW_DEFAULTS = {
  sent_by_ai: 0,
  campaign_id: null,
  client_ref: null,
  media_id: null,
  media_key: null,
  lane: "live",
} as const;

const INSERT_CHUNK = 50;

/** Every column, in the order the insert binds them (the type names each one). */
const MESSAGE_COLUMNS = Object.keys(
  {
    id: 1,
    account_id: 1,
    conversation_id: 1,
    contact_id: 1,
    channel_id: 1,
    direction: 1,
    type: 1,
    content: 1,
    status: 1,
    wa_message_id: 1,
    error_code: 1,
    error_message: 1,
    origin: 1,
    sent_by_ai: 1,
    campaign_id: 1,
    client_ref: 1,
    media_id: 1,
    media_key: 1,
    lane: 1,
    context_wa_message_id: 1,
    upstream_timestamp: 1,
    details: 1,
    created_at: 1,
    updated_at: 1,
  } satisfies Record<keyof MessageRow, 1>,
) as (keyof MessageRow)[];

/** The insert of `n` rows, written once per size: no query building per send. */
const insertSql = new Map<number, string>();

function insertSqlFor(n: number): string {
  let text = insertSql.get(n);
  if (!text) {
    const row = `(${MESSAGE_COLUMNS.map(() => "?").join(", ")})`;
    text = `insert into messages (${MESSAGE_COLUMNS.join(", ")}) values ${
      Array.from({ length: n }, () => row).join(", ")
    }`;
    insertSql.set(n, text);
  }
  return text;
}

export async function insertMessages(
  db: Executor,
  rows: MessageRow[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    const chunk = rows.slice(i, i + INSERT_CHUNK);
    const params = chunk.flatMap((row) => MESSAGE_COLUMNS.map((c) => row[c]));
    await db.executeQuery(
      CompiledQuery.raw(insertSqlFor(chunk.length), params),
    );
  }
}

export async function findMessageById(
  db: Executor,
  id: string,
): Promise<MessageRow | undefined> {
  return await db.selectFrom("messages").selectAll().where("id", "=", id)
    .executeTakeFirst();
}

/** A message of the account; another account's id is not found. */
export async function findAccountMessage(
  db: Executor,
  accountId: string,
  id: string,
): Promise<MessageRow | undefined> {
  return await db.selectFrom("messages").selectAll()
    .where("id", "=", id).where("account_id", "=", accountId)
    .executeTakeFirst();
}

export async function findMessageByWamid(
  db: Executor,
  wamid: string,
): Promise<MessageRow | undefined> {
  return await db.selectFrom("messages").selectAll()
    .where("wa_message_id", "=", wamid).executeTakeFirst();
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
  const set: Partial<MessageRow> = {
    status: change.to,
    updated_at: change.now,
  };
  if (change.errorCode !== undefined) set.error_code = change.errorCode;
  if (change.errorMessage !== undefined) {
    set.error_message = change.errorMessage;
  }
  const result = await db.updateTable("messages").set(set)
    .where("id", "=", id).where("status", "=", change.from)
    .executeTakeFirst();
  if (change.waMessageId) {
    await db.updateTable("messages").set({ wa_message_id: change.waMessageId })
      .where("id", "=", id).where("wa_message_id", "is", null).execute();
  }
  return Number(result.numUpdatedRows) > 0;
}

export async function setWamidIfMissing(
  db: Executor,
  id: string,
  wamid: string,
): Promise<void> {
  await db.updateTable("messages").set({ wa_message_id: wamid })
    .where("id", "=", id).where("wa_message_id", "is", null).execute();
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

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

export async function insertMessages(
  db: Executor,
  rows: MessageRow[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    await db.insertInto("messages").values(rows.slice(i, i + INSERT_CHUNK))
      .execute();
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

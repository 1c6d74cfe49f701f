import type { Db, Executor } from "../../db/schema.ts";
import { PlannedEvents, recordEvent } from "../events/event_service.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { AppError } from "../../errors.ts";
import { findAccountMessage } from "./message_repo.ts";
import { type Message, type MessageView, toMessageView } from "./message.ts";
import type { Viewer } from "../conversations/conversation.ts";
import { seesConversation } from "../conversations/conversation_service.ts";

/** One message the viewer may see (its conversation's visibility), as GET /messages/:id shows it. */
export async function getMessage(
  deps: { db: Db },
  viewer: Viewer,
  id: string,
): Promise<MessageView> {
  const row = await findAccountMessage(deps.db, viewer.accountId, id);
  if (!row || !await seesConversation(deps, viewer, row.conversationId)) {
    throw new AppError("MESSAGE_NOT_FOUND", `Cannot find message "${id}"`);
  }
  return toMessageView(row);
}

/**
 * Records an internal `message.updated` event (the panel's stream only)
 * with the message as now stored, in the caller's transaction: a
 * customer's edit or deletion, its media stored or failed.
 */
export async function recordMessageUpdated(
  trx: Executor,
  accountId: string,
  messageId: string,
  at: Date,
): Promise<void> {
  const row = await findAccountMessage(trx, accountId, messageId);
  if (!row) return;
  await recordEvent(trx, {
    accountId,
    type: "message.updated",
    data: toMessageView(row),
    createdAt: at,
  });
}

/**
 * recordMessageUpdated() in a plan (src/db/planned_writes.ts): the event
 * of `message` as the plan's writes leave it, recorded on `writes`. The
 * caller guards that the row it read is still the one it changed.
 */
export async function planMessageUpdated(
  db: Executor,
  writes: PlannedWrites,
  message: Message,
  at: Date,
): Promise<void> {
  const events = new PlannedEvents();
  events.add({
    accountId: message.accountId,
    type: "message.updated",
    data: toMessageView(message),
    createdAt: at,
  });
  await events.flushPlanned(db, writes);
}

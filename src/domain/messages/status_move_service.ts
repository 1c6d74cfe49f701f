/**
 * A message's status move as planned writes (src/db/planned_writes.ts):
 * what recordStatusChange() writes, recorded for a write batch (libSQL) or
 * the unit's transaction (SQLite), with the move guarded.
 */
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { updateLastMessageStatus } from "../conversations/conversation_service.ts";
import { type PlannedEvents, recordEvent } from "../events/event_service.ts";
import {
  type MessageRow,
  setWamidIfMissing,
  toMessage,
  transitionStatus,
} from "./message_repo.ts";
import { statusChangedPayload } from "./message_events.ts";
import type { StatusChange } from "./status_service.ts";

/**
 * recordStatusChange() as planned writes: the move from `row.status`,
 * guarded (libSQL: the message is still in the status read, else the unit
 * is planned again), the upstream id kept, the conversation's mirror and
 * the `message.status_changed` event (on `events`). Returns the row as the
 * move leaves it.
 */
export async function planStatusMove(
  writes: PlannedWrites,
  row: MessageRow,
  change: StatusChange,
  events: PlannedEvents,
): Promise<MessageRow> {
  const { waMessageId, ...move } = change;
  await transitionStatus(writes.db, row.id, { from: row.status, ...move });
  writes.expectChanges(1);
  if (waMessageId) await setWamidIfMissing(writes.db, row.id, waMessageId);
  const updated: MessageRow = {
    ...row,
    status: change.to,
    updated_at: change.now,
    wa_message_id: row.wa_message_id ?? waMessageId ?? null,
    ...(change.errorCode !== undefined ? { error_code: change.errorCode } : {}),
    ...(change.errorMessage !== undefined
      ? { error_message: change.errorMessage }
      : {}),
  };
  await updateLastMessageStatus(writes.db, {
    conversationId: updated.conversation_id,
    messageId: updated.id,
    status: updated.status,
  });
  await recordEvent(writes.db, {
    accountId: updated.account_id,
    type: "message.status_changed",
    data: statusChangedPayload(toMessage(updated), row.status),
    createdAt: change.now,
    lane: row.lane === "batch" ? "batch" : "live",
  }, events);
  return updated;
}

import type { Executor } from "../../db/schema.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { updateLastMessageStatus } from "../conversations/conversation_service.ts";
import { type HeldEvents, recordEvent } from "../events/event_service.ts";
import {
  type MessageRow,
  statusUnchanged,
  toMessage,
  transitionStatus,
} from "./message_repo.ts";
import { statusChangedPayload } from "./message_events.ts";

export interface StatusChange {
  to: string;
  /** Database time (ISO 8601 UTC with ms). */
  now: string;
  waMessageId?: string;
  errorCode?: string;
  errorMessage?: string;
}

/**
 * Moves a message from its current status (as read in `row`, in this same
 * transaction) to `change.to` in the caller's transaction, mirrors it on the
 * conversation and records one
 * `message.status_changed` event (its deliveries made when `held` is flushed,
 * if given). False (and nothing written) when the message is no longer in
 * the status `row` shows.
 */
export async function recordStatusChange(
  trx: Executor,
  row: MessageRow,
  change: StatusChange,
  held?: HeldEvents,
): Promise<boolean> {
  const moved = await transitionStatus(trx, row.id, {
    from: row.status,
    ...change,
  });
  if (!moved) return false;
  await afterStatusChange(trx, row, change, held);
  return true;
}

/**
 * recordStatusChange() as a plan's writes (src/db/planned_writes.ts): the
 * batch fails (and the plan runs again) unless the message is still in the
 * status `row` shows.
 */
export async function planStatusChange(
  plan: { writes: PlannedWrites; events: HeldEvents },
  row: MessageRow,
  change: StatusChange,
): Promise<void> {
  plan.writes.expectRow(statusUnchanged(row));
  await transitionStatus(plan.writes.db, row.id, {
    from: row.status,
    ...change,
  });
  await afterStatusChange(plan.writes.db, row, change, plan.events);
}

/**
 * The conversation's mirror and the event of a status change just written;
 * returns the row as the change left it.
 */
export async function afterStatusChange(
  trx: Executor,
  row: MessageRow,
  change: StatusChange,
  held: HeldEvents | undefined,
): Promise<MessageRow> {
  // The row as these writes left it, without reading it again: `row` was
  // read in this transaction (or guarded), so nothing else has changed it.
  const updated: MessageRow = {
    ...row,
    status: change.to,
    updated_at: change.now,
    wa_message_id: row.wa_message_id ?? change.waMessageId ?? null,
    ...(change.errorCode !== undefined ? { error_code: change.errorCode } : {}),
    ...(change.errorMessage !== undefined
      ? { error_message: change.errorMessage }
      : {}),
  };
  await updateLastMessageStatus(trx, {
    conversationId: updated.conversation_id,
    messageId: updated.id,
    status: updated.status,
  });
  await recordEvent(trx, {
    accountId: updated.account_id,
    type: "message.status_changed",
    data: statusChangedPayload(toMessage(updated), row.status),
    createdAt: change.now,
    lane: row.lane === "batch" ? "batch" : "live",
  }, held);
  return updated;
}

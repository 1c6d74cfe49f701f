/**
 * A message's status move as planned writes (src/db/planned_writes.ts):
 * what recordStatusChange() writes, recorded for a write batch (libSQL) or
 * the unit's transaction (SQLite), with the move guarded; and the refresh
 * of the template a failed send named (refreshTemplateOf()'s).
 */
import type { Executor } from "../../db/schema.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { fromJson } from "../../db/json.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import { enqueueManyWhere } from "../../jobs/queue.ts";
import { findChannelById } from "../channels/channel_repo.ts";
import { REFRESH_WINDOW_MS } from "../templates/template_refresh_service.ts";
import { findTemplateByName } from "../templates/template_repo.ts";
import { takeRefreshRequest } from "../templates/template_sync_repo.ts";
import type { PlannedEvents } from "../events/event_service.ts";
import {
  type MessageRow,
  setWamidIfMissing,
  transitionStatus,
} from "./message_repo.ts";
import { afterStatusChange, type StatusChange } from "./status_service.ts";

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
  return await afterStatusChange(writes.db, row, change, events);
}

/** The job of a refresh goes in only where the take left this request's mark (its created_at). */
const TAKEN =
  "exists (select 1 from templates as t where t.id = v.k and t.refresh_requested_at = v.created_at)";

/**
 * refreshTemplateOf() as planned writes: the template read, the request
 * taken (unless one was in the last REFRESH_WINDOW_MS) and its job queued
 * only where that take happened, in the batch's own statements (no answer
 * of the take can steer the insert).
 */
export async function planTemplateRefresh(
  db: Executor,
  writes: PlannedWrites,
  message: MessageRow,
  at: Date,
): Promise<void> {
  if (!message.channel_id) return;
  const channel = await findChannelById(db, message.channel_id);
  const content = fromJson<{ name?: string; language?: { code?: string } }>(
    message.content,
    {},
  );
  if (!channel || !content.name || !content.language?.code) return;
  const template = await findTemplateByName(db, {
    accountId: message.account_id,
    name: content.name,
    language: content.language.code,
    channel,
    preferApproved: true,
  });
  if (!template) return;
  const now = toDbTime(at);
  await takeRefreshRequest(writes.db, {
    id: template.id,
    now,
    since: toDbTime(addMs(at, -REFRESH_WINDOW_MS)),
  });
  await enqueueManyWhere(
    writes.db,
    [{
      key: template.id,
      job: {
        kind: "template.refresh",
        payload: {
          wabaId: template.wabaId ?? channel.wabaId,
          name: template.name,
        },
        uniqueKey: `template.refresh:${template.id}:${now}`,
      },
    }],
    TAKEN,
    at,
  );
}

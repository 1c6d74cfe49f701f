/**
 * A status report applied as planned writes (src/db/planned_writes.ts), for
 * the status-only callbacks of a unit (status_webhook_service.ts): the
 * message read, the rank rule decided (applyStatusIn's rules), the move and
 * what follows it recorded, to be written in one batch (libSQL) or in the
 * unit's transaction (SQLite). The move is guarded (its row still in the
 * status read), so on libSQL a report that raced another writer is planned
 * again from a fresh read. A plan's reads do not see its own writes, so the
 * reports of one unit see each other's moves through `StatusUnit.seen`.
 *
 * The i30-conv-inbound branch splits applyStatusIn into reads and planned
 * writes (readStatus, planStatusChange, refreshTemplateOf with writes) at
 * the same time: once both are in, this file keeps only the unit's `seen`
 * rows on top of those.
 */
import type { Executor } from "../../db/schema.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { toDbTime } from "../../db/time.ts";
import type { Channel } from "../channels/channel.ts";
import type { PlannedEvents } from "../events/event_service.ts";
import {
  findMessageById,
  findMessageByWamid,
  type MessageRow,
  setWamidIfMissing,
} from "../messages/message_repo.ts";
import {
  planStatusMove,
  planTemplateRefresh,
} from "../messages/status_move_service.ts";
import { applyStatusReport, type OutboundStatus } from "../messages/status.ts";
import { reportedStatus, statusChangeOf } from "./status_report_service.ts";
import type { MetaStatus } from "./meta_payload.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";

/** What the reports of one unit share: their events, and the rows as they left them. */
export interface StatusUnit {
  events: PlannedEvents;
  seen: Map<string, MessageRow>;
}

/**
 * applyStatusIn() as planned writes: reads on `db`, writes recorded on
 * `writes`. False when no message matches yet (nothing recorded).
 */
export async function planStatus(
  db: Executor,
  writes: PlannedWrites,
  deps: { clock: Clock; log: Logger },
  channel: Channel,
  status: MetaStatus,
  unit: StatusUnit,
): Promise<boolean> {
  const reported = reportedStatus(status.status);
  if (!reported) {
    deps.log.debug("Ignoring status value", { status: status.status });
    return true;
  }
  const row = await reportedMessage(db, channel, status, unit.seen);
  if (!row) return false;
  if (row.direction !== "outbound" || row.account_id !== channel.accountId) {
    return true;
  }
  const decision = applyStatusReport(row.status as OutboundStatus, reported);
  if (!decision.change) {
    if (!row.wa_message_id) {
      await setWamidIfMissing(writes.db, row.id, status.id);
      unit.seen.set(row.id, { ...row, wa_message_id: status.id });
    }
    return true;
  }
  const { change, refresh } = statusChangeOf(
    row,
    status,
    reported,
    decision.to,
    toDbTime(deps.clock.now()),
  );
  unit.seen.set(row.id, await planStatusMove(writes, row, change, unit.events));
  if (refresh) await planTemplateRefresh(db, writes, row, deps.clock.now());
  return true;
}

/**
 * The message a report is about: by its upstream id, else by the id the
 * send put in biz_opaque_callback_data (the channel's account's outbound
 * message only); as this unit left it (`seen`).
 */
async function reportedMessage(
  db: Executor,
  channel: Channel,
  status: MetaStatus,
  seen: ReadonlyMap<string, MessageRow>,
): Promise<MessageRow | undefined> {
  const latest = (r: MessageRow | undefined) => r && (seen.get(r.id) ?? r);
  const row = latest(await findMessageByWamid(db, status.id)) ??
    [...seen.values()].find((r) => r.wa_message_id === status.id);
  if (row || !status.biz_opaque_callback_data) return row;
  const candidate = latest(
    await findMessageById(db, status.biz_opaque_callback_data),
  );
  return candidate && candidate.account_id === channel.accountId &&
      candidate.direction === "outbound"
    ? candidate
    : undefined;
}

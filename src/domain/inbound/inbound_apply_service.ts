import type { Db, Executor } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { newId } from "../../ids.ts";
import { toJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import type { Channel } from "../channels/channel.ts";
import { recordInbound } from "../conversations/conversation_service.ts";
import { setReferral } from "../conversations/conversation_write_repo.ts";
import { type HeldEvents, recordEvent } from "../events/event_service.ts";
import { previewOf } from "../messages/outbound.ts";
import {
  findAccountMessageByWamid,
  findMessageById,
  findMessageByWamid,
  insertMessage,
  type MessageRow,
  noMessageWithWamid,
  setWamidIfMissing,
} from "../messages/message_repo.ts";
import {
  type Message,
  UPSTREAM_MESSAGE_DEFAULTS,
} from "../messages/message.ts";
import { messagePayload } from "../messages/message_events.ts";
import { applyStatusReport, type OutboundStatus } from "../messages/status.ts";
import { touchContactLastMessage } from "../messages/send_repo.ts";
import {
  planStatusChange,
  recordStatusChange,
  type StatusChange,
} from "../messages/status_service.ts";
import {
  inboundContent,
  type MetaMessage,
  type MetaStatus,
} from "./meta_payload.ts";
import type { Sender } from "./sender.ts";
import { reportedStatus, statusChangeOf } from "./status_report_service.ts";
import { refreshTemplateOf } from "../messages/queued_template_service.ts";
import { queueInboundMedia } from "./inbound_media_service.ts";
import {
  applyEcho,
  applyEditOrRevoke,
  applySystemChange,
  openThread,
} from "./customer_change_service.ts";
import { runPlannedWithEvents } from "../events/planned_event_service.ts";
import {
  type MessageDetails,
  referralOf,
} from "../messages/message_details.ts";

interface ApplyDeps {
  db: Db;
  /** Writes go as plans (src/db/planned_writes.ts): on libSQL, no transaction. */
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
  log: Logger;
}

function upstreamTime(timestamp: string | undefined, fallback: Date): Date {
  const seconds = Number(timestamp);
  if (!timestamp || !Number.isFinite(seconds) || seconds <= 0) return fallback;
  const at = new Date(seconds * 1000).getTime();
  // Past the Date range (NaN), or a clock ahead of ours: the service window must not grow from skew.
  return Number.isNaN(at) || at > fallback.getTime() ? fallback : new Date(at);
}

/**
 * Stores one inbound message with its contact, conversation, media job and
 * events (contact.created, conversation.created, message.received in that
 * order) atomically: in a group commit's transaction, or on libSQL its
 * reads, then a batch, planned again when another writer got there first
 * (the same new customer received by two instances is one contact). A
 * message seen before changes nothing.
 */
export async function applyInboundMessage(
  deps: ApplyDeps,
  channel: Channel,
  input: { message: MetaMessage; sender: Sender },
): Promise<string | null> {
  const { message, sender } = input;
  const now = deps.clock.now();
  const sentAt = upstreamTime(message.timestamp, now);
  if (message.type === "edit" || message.type === "revoke") {
    return await runPlannedWithEvents(
      deps.commits,
      (db, planned) =>
        applyEditOrRevoke(db, { ...planned, channel, at: sentAt }, input),
    );
  }
  if (await findMessageByWamid(deps.db, message.id)) return null;
  const { type, content, media } = inboundContent(message);
  return await runPlannedWithEvents(deps.commits, async (trx, planned) => {
    // Checked again in the unit, and guarded: two workers may race on a Meta retry.
    if (await findMessageByWamid(trx, message.id)) return null;
    const { writes } = planned;
    const { contact, conversation } = await openThread(
      trx,
      { ...planned, channel, now },
      sender,
    );
    const nowIso = toDbTime(now);
    const stored: Message = {
      id: newId(now.getTime()),
      accountId: channel.accountId,
      conversationId: conversation.id,
      contactId: contact.id,
      channelId: channel.id,
      direction: "inbound",
      type,
      content,
      status: "received",
      waMessageId: message.id,
      errorCode: message.errors?.[0] ? String(message.errors[0].code) : null,
      errorMessage: message.errors?.[0]?.error_data?.details ??
        message.errors?.[0]?.title ?? null,
      origin: "inbound",
      ...UPSTREAM_MESSAGE_DEFAULTS,
      contextWaMessageId: message.context?.id ?? null,
      upstreamAt: toDbTime(sentAt),
      details: await detailsOf(trx, channel, message),
      createdAt: nowIso,
      updatedAt: nowIso,
    };
    writes.expectRow(noMessageWithWamid(message.id));
    await insertMessage(writes.db, stored);
    const referral = stored.details.referral;
    // The conversation keeps the last ad that brought the customer, for attribution.
    if (referral) {
      await setReferral(writes.db, conversation.id, toJson(referral));
    }
    await recordInbound(writes.db, {
      conversationId: conversation.id,
      messageId: stored.id,
      preview: previewOf(type, content),
      at: sentAt,
    });
    await touchContactLastMessage(writes.db, contact.id, nowIso);
    if (media) {
      await queueInboundMedia(writes.db, channel, {
        messageId: stored.id,
        media,
        now,
      });
    }
    await recordEvent(writes.db, {
      accountId: channel.accountId,
      type: "message.received",
      data: {
        ...messagePayload(stored),
        contact: {
          id: contact.id,
          name: contact.name,
          phoneNumber: contact.phoneNumber,
          userId: contact.userId,
          username: contact.username,
        },
      },
      createdAt: now,
    }, planned.events);
    return type === "system"
      ? await applySystemChange(
        trx,
        { ...planned, contact, at: sentAt },
        message,
      )
      : null;
  });
}

/** Reply context (with our id of the quoted message), forward flags and ad referral. */
async function detailsOf(
  trx: Executor,
  channel: Channel,
  message: MetaMessage,
): Promise<MessageDetails> {
  const quoted = message.context?.id
    ? await findAccountMessageByWamid(
      trx,
      channel.accountId,
      message.context.id,
    )
    : undefined;
  const details: MessageDetails = {
    ...(quoted ? { contextMessageId: quoted.id } : {}),
    ...(message.context?.forwarded ? { forwarded: true } : {}),
    ...(message.context?.frequently_forwarded
      ? { forwarded: true, frequentlyForwarded: true }
      : {}),
    ...(message.referral ? { referral: referralOf(message.referral) } : {}),
  };
  return details;
}

/** Stores an echo of a message the business sent from the WhatsApp Business app. */
export async function applyEchoMessage(
  deps: ApplyDeps,
  channel: Channel,
  input: { echo: MetaMessage; recipient: Sender },
): Promise<void> {
  const now = deps.clock.now();
  const at = upstreamTime(input.echo.timestamp, now);
  await runPlannedWithEvents(
    deps.commits,
    (db, planned) =>
      applyEcho(db, { ...planned, channel }, { ...input, at, now }),
  );
}

/**
 * Applies one status report with the rank rule, atomically (a group
 * commit's transaction, or on libSQL its reads, then a batch guarded on the
 * status read). Returns false when no message matches yet (our send may not have
 * committed its upstream id).
 */
export async function applyStatus(
  deps: ApplyDeps,
  channel: Channel,
  status: MetaStatus,
): Promise<boolean> {
  return await runPlannedWithEvents(deps.commits, async (db, planned) => {
    const read = await readStatus(db, deps, channel, status);
    if (read.done !== undefined) return read.done;
    const { row, change } = read;
    if (!change) {
      await setWamidIfMissing(planned.writes.db, row.id, status.id);
      return true;
    }
    await planStatusChange(planned, row, change);
    if (read.refresh) {
      await refreshTemplateOf(db, row, deps.clock.now(), planned);
    }
    return true;
  });
}

/**
 * applyStatus() in the caller's transaction (a status-only webhook's own);
 * with `held`, its event's deliveries are made when the caller flushes it.
 */
export async function applyStatusIn(
  trx: Executor,
  deps: Pick<ApplyDeps, "clock" | "log">,
  channel: Channel,
  status: MetaStatus,
  held?: HeldEvents,
): Promise<boolean> {
  const read = await readStatus(trx, deps, channel, status);
  if (read.done !== undefined) return read.done;
  const { row, change } = read;
  if (!change) {
    await setWamidIfMissing(trx, row.id, status.id);
    return true;
  }
  await recordStatusChange(trx, row, change, held);
  if (read.refresh) await refreshTemplateOf(trx, row, deps.clock.now());
  return true;
}

/**
 * What a status report does, from reads only: `done` when it changes
 * nothing (true) or matches no message yet (false); else the message, the
 * status change (none: only its missing upstream id is kept), and whether
 * its template is read again (Meta failed a template send on its template,
 * edited or removed there).
 */
async function readStatus(
  trx: Executor,
  deps: Pick<ApplyDeps, "clock" | "log">,
  channel: Channel,
  status: MetaStatus,
): Promise<
  | { done: boolean }
  | { done?: never; row: MessageRow; change?: StatusChange; refresh: boolean }
> {
  const reported = reportedStatus(status.status);
  if (!reported) {
    deps.log.debug("Ignoring status value", { status: status.status });
    return { done: true };
  }
  let row = await findMessageByWamid(trx, status.id);
  if (!row && status.biz_opaque_callback_data) {
    const candidate = await findMessageById(
      trx,
      status.biz_opaque_callback_data,
    );
    if (
      candidate && candidate.account_id === channel.accountId &&
      candidate.direction === "outbound"
    ) {
      row = candidate;
    }
  }
  if (!row) return { done: false };
  if (row.direction !== "outbound" || row.account_id !== channel.accountId) {
    return { done: true };
  }
  const decision = applyStatusReport(row.status as OutboundStatus, reported);
  if (!decision.change) {
    return row.wa_message_id ? { done: true } : { row, refresh: false };
  }
  return {
    row,
    ...statusChangeOf(
      row,
      status,
      reported,
      decision.to,
      toDbTime(deps.clock.now()),
    ),
  };
}

// What an accepted send becomes: its message row, its answer and its job.
import { newId } from "../../ids.ts";
import { toJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { PRIORITY } from "../../jobs/kinds.ts";
import type { EnqueueInput } from "../../jobs/types.ts";
import type { SendMessageInput } from "./outbound_schema.ts";
import type { MessageRow } from "./message_repo.ts";
import type { Admitted, Lane, SendContext } from "./send_admission_service.ts";

/** The 201 body of POST /messages and the `message` of a queued batch item. */
export interface AcceptedMessage {
  id: string;
  conversationId: string;
  direction: "outbound";
  type: string;
  status: "queued";
  waMessageId: null;
  clientRef: string | null;
  createdAt: string;
}

/** The queued message row of an admitted send; `content` is contentOf(input). */
export function outboundRow(
  ctx: SendContext,
  input: SendMessageInput,
  to: Admitted,
  content: Record<string, unknown>,
): MessageRow {
  const nowIso = toDbTime(ctx.now);
  return {
    id: newId(ctx.now.getTime()),
    account_id: ctx.accountId,
    conversation_id: to.conversation.id,
    contact_id: to.contact.id,
    channel_id: to.channel.id,
    direction: "outbound",
    type: input.type,
    content: toJson(content),
    status: "queued",
    wa_message_id: null,
    error_code: null,
    error_message: null,
    origin: input.metadata?.origin ?? "external_api",
    sent_by_ai: input.metadata?.sentByAi ? 1 : 0,
    campaign_id: input.metadata?.campaignId ?? null,
    client_ref: input.clientRef ?? null,
    media_id: null,
    media_key: null,
    lane: ctx.lane,
    context_wa_message_id: null,
    upstream_timestamp: null,
    details: null,
    created_at: nowIso,
    updated_at: nowIso,
  };
}

export function accepted(row: MessageRow): AcceptedMessage {
  return {
    id: row.id,
    conversationId: row.conversation_id,
    direction: "outbound",
    type: row.type,
    status: "queued",
    waMessageId: null,
    clientRef: row.client_ref,
    createdAt: row.created_at,
  };
}

/** One `message.send` job per row, at the lane's priority (batch jobs paced by `runAt`). */
export function sendJobs(
  rows: MessageRow[],
  lane: Lane,
  runAt?: Map<string, Date>,
): EnqueueInput[] {
  return rows.map((row) => ({
    kind: "message.send",
    payload: { messageId: row.id },
    priority: lane === "live" ? PRIORITY.live : PRIORITY.batch,
    uniqueKey: `message.send:${row.id}`,
    maxAttempts: 12,
    ...(runAt?.has(row.id) ? { runAt: runAt.get(row.id)! } : {}),
  }));
}

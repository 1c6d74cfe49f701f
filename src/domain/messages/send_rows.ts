// What an accepted send becomes: its message row, its answer and its job.
import { newId } from "../../ids.ts";
import { toDbTime } from "../../db/time.ts";
import { PRIORITY } from "../../jobs/kinds.ts";
import type { EnqueueInput } from "../../jobs/types.ts";
import type { SendMessageInput } from "./outbound_schema.ts";
import type { Message } from "./message.ts";
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

/** The queued message of an admitted send; `content` is contentOf(input). */
export function outboundMessage(
  ctx: SendContext,
  input: SendMessageInput,
  to: Admitted,
  content: Record<string, unknown>,
): Message {
  const nowIso = toDbTime(ctx.now);
  return {
    id: newId(ctx.now.getTime()),
    accountId: ctx.accountId,
    conversationId: to.conversation.id,
    contactId: to.contact.id,
    channelId: to.channel.id,
    direction: "outbound",
    type: input.type,
    content,
    status: "queued",
    waMessageId: null,
    errorCode: null,
    errorMessage: null,
    origin: ctx.agent ? "panel" : input.metadata?.origin ?? "external_api",
    sentByAi: Boolean(input.metadata?.sentByAi),
    campaignId: input.metadata?.campaignId ?? null,
    clientRef: input.clientRef ?? null,
    mediaId: null,
    mediaKey: null,
    lane: ctx.lane,
    contextWaMessageId: null,
    upstreamAt: null,
    details: {},
    agentId: ctx.agent?.id ?? null,
    createdAt: nowIso,
    updatedAt: nowIso,
  };
}

export function accepted(message: Message): AcceptedMessage {
  return {
    id: message.id,
    conversationId: message.conversationId,
    direction: "outbound",
    type: message.type,
    status: "queued",
    waMessageId: null,
    clientRef: message.clientRef,
    createdAt: message.createdAt,
  };
}

/** One `message.send` job per row, at the lane's priority (batch jobs paced by `runAt`). */
export function sendJobs(
  rows: Message[],
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

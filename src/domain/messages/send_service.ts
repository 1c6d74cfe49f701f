import type { Db, Executor } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import { AppError, type ErrorCode } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { toJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { enqueueMany, PRIORITY } from "../../jobs/queue.ts";
import { toE164 } from "../phones/phone.ts";
import type { Channel } from "../channels/channel.ts";
import { findChannel } from "../channels/channel_repo.ts";
import {
  findContactByPhone,
  findContactByUserId,
  findOrCreateContact,
} from "../contacts/contact_service.ts";
import { type Contact, isBsuid } from "../contacts/contact.ts";
import { findConversationForContact } from "../conversations/conversation_repo.ts";
import {
  findOrCreateConversation,
  recordOutbound,
} from "../conversations/conversation_service.ts";
import { findSendableTemplate } from "../templates/template_service.ts";
import type { SendMessageInput } from "./outbound_schema.ts";
import {
  contentOf,
  needsServiceWindow,
  type ParseResult,
  parseSendMessage,
  placeholderCount,
  previewOf,
} from "./outbound.ts";
import {
  findAccountMessageByWamid,
  insertMessages,
  type MessageRow,
} from "./message_repo.ts";
import { countQueuedBatch, touchContactLastMessage } from "./send_repo.ts";

export interface SendDeps {
  db: Db;
  clock: Clock;
  /** Wakes the worker pool after a commit (optional hint). */
  notifyJobs?: () => void;
}

export type Lane = "live" | "batch";

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

interface SendContext {
  accountId: string;
  now: Date;
  lane: Lane;
  channels: Map<string, Channel | null>;
}

class SendRejected extends AppError {}

function reject(code: ErrorCode, message: string): never {
  throw new SendRejected(code, message);
}

async function channelFor(
  trx: Executor,
  ctx: SendContext,
  id: string,
): Promise<Channel> {
  if (!ctx.channels.has(id)) {
    ctx.channels.set(id, (await findChannel(trx, ctx.accountId, id)) ?? null);
  }
  const channel = ctx.channels.get(id);
  if (!channel) {
    reject(
      "INVALID_CHANNEL",
      `Cannot send message: channel "${id}" does not exist in this account`,
    );
  }
  if (channel.status !== "connected") {
    reject(
      "CHANNEL_NOT_CONNECTED",
      `Cannot send message: channel "${id}" (${channel.phoneNumber}) is ${channel.status}`,
    );
  }
  return channel;
}

async function checkTemplate(
  trx: Executor,
  ctx: SendContext,
  channel: Channel,
  input: Extract<SendMessageInput, { type: "template" }>,
): Promise<void> {
  const { name, language } = input.template;
  const template = await findSendableTemplate(trx, {
    accountId: ctx.accountId,
    channelId: channel.id,
    name,
    language: language.code,
  });
  if (!template) {
    reject(
      "TEMPLATE_NOT_FOUND",
      `Cannot send template "${name}" (${language.code}): no such template for channel "${channel.id}" or globally`,
    );
  }
  if (template.status !== "approved") {
    reject(
      "TEMPLATE_NOT_APPROVED",
      `Cannot send template "${name}" (${language.code}): its status is "${template.status}", only approved templates can be sent`,
    );
  }
  const body = template.components.find((c) =>
    String((c as { type?: string }).type).toUpperCase() === "BODY"
  ) as { text?: string } | undefined;
  const expected = body?.text ? placeholderCount(body.text) : 0;
  const given = (input.template.components ?? [])
    .filter((c) => c.type === "body")
    .reduce((n, c) => n + c.parameters.length, 0);
  if (expected !== given) {
    reject(
      "VALIDATION_ERROR",
      `Cannot send template "${name}": its body expects ${expected} parameter(s), got ${given}`,
    );
  }
}

/**
 * Checks one message against every rule and, when it passes, writes the
 * contact, conversation and message rows in `trx`. Returns the row and its
 * contact; throws SendRejected before writing anything when a rule fails.
 */
async function admit(
  trx: Executor,
  ctx: SendContext,
  input: SendMessageInput,
  options: { respectOptOut: boolean },
): Promise<{ row: MessageRow; skipped?: "opted_out" }> {
  const channel = await channelFor(trx, ctx, input.phoneNumberId);
  const userId = isBsuid(input.to.trim()) ? input.to.trim() : null;
  const phone = userId ? null : toE164(input.to);
  if (!userId && !phone) {
    reject(
      "INVALID_PHONE",
      `Cannot send message: "${input.to}" is not a valid phone number with country code nor a business-scoped user id`,
    );
  }
  const to = (userId ?? phone)!;
  const existing: Contact | undefined = userId
    ? await findContactByUserId(trx, ctx.accountId, userId)
    : await findContactByPhone(trx, ctx.accountId, to);
  if (options.respectOptOut && existing && !existing.optedIn) {
    return { row: undefined as never, skipped: "opted_out" };
  }
  const conversation = existing
    ? await findConversationForContact(trx, {
      accountId: ctx.accountId,
      contactId: existing.id,
      channelId: channel.id,
    })
    : undefined;
  const nowIso = toDbTime(ctx.now);
  if (needsServiceWindow(input.type)) {
    const expires = conversation?.serviceWindowExpiresAt ?? null;
    if (!expires || expires <= nowIso) {
      reject(
        "SERVICE_WINDOW_EXPIRED",
        expires
          ? `Cannot send free-form message: the service window for "${to}" closed at ${expires}; send an approved template instead`
          : `Cannot send free-form message: "${to}" has not written to this channel, so no service window is open; send an approved template instead`,
      );
    }
  }
  if (input.type === "template") await checkTemplate(trx, ctx, channel, input);
  if (input.type === "reaction") {
    const target = await findAccountMessageByWamid(
      trx,
      ctx.accountId,
      input.reaction.message_id,
    );
    if (!target || target.conversation_id !== conversation?.id) {
      reject(
        "VALIDATION_ERROR",
        `Cannot react: message "${input.reaction.message_id}" is not in the conversation with "${to}"`,
      );
    }
  }
  const contact = existing ??
    (await findOrCreateContact(trx, {
      accountId: ctx.accountId,
      phoneNumber: phone,
      userId,
      now: ctx.now,
    }))
      .contact;
  const conv = conversation ??
    (await findOrCreateConversation(trx, {
      accountId: ctx.accountId,
      contactId: contact.id,
      channelId: channel.id,
      now: ctx.now,
    })).conversation;
  const content = contentOf(input);
  const row: MessageRow = {
    id: newId(ctx.now.getTime()),
    account_id: ctx.accountId,
    conversation_id: conv.id,
    contact_id: contact.id,
    channel_id: channel.id,
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
  await recordOutbound(trx, {
    conversationId: conv.id,
    messageId: row.id,
    preview: previewOf(input.type, content),
    status: "queued",
    at: ctx.now,
  });
  await touchContactLastMessage(trx, contact.id, nowIso);
  return { row };
}

function accepted(row: MessageRow): AcceptedMessage {
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

function sendJobs(rows: MessageRow[], lane: Lane, runAt?: Map<string, Date>) {
  return rows.map((row) => ({
    kind: "message.send" as const,
    payload: { messageId: row.id },
    priority: lane === "live" ? PRIORITY.live : PRIORITY.batch,
    uniqueKey: `message.send:${row.id}`,
    maxAttempts: 12,
    ...(runAt?.has(row.id) ? { runAt: runAt.get(row.id)! } : {}),
  }));
}

/**
 * Paces batch jobs: each channel's new sends become due one send interval
 * apart, after what that channel already has queued. Claims then interleave
 * channels instead of filling every worker with one channel's batch, which
 * would only wait in that channel's governor (the governor still enforces
 * the exact rate).
 */
class BatchPacer {
  #next = new Map<string, number>();
  constructor(readonly now: Date, readonly defaultRate: number) {}

  async dueAt(trx: Executor, channel: Channel): Promise<Date> {
    let position = this.#next.get(channel.id);
    if (position === undefined) {
      position = await countQueuedBatch(trx, channel.id);
    }
    this.#next.set(channel.id, position + 1);
    const rate = channel.sendRate ?? this.defaultRate;
    return new Date(this.now.getTime() + Math.floor((position * 1000) / rate));
  }
}

/**
 * Accepts one message: every rule is checked before anything is written;
 * the message row, its contact/conversation (and their events) and its send
 * job commit in the caller's transaction.
 */
export async function acceptMessage(
  trx: Executor,
  deps: { clock: Clock },
  accountId: string,
  input: SendMessageInput,
): Promise<AcceptedMessage> {
  const ctx: SendContext = {
    accountId,
    now: deps.clock.now(),
    lane: "live",
    channels: new Map(),
  };
  const { row } = await admit(trx, ctx, input, { respectOptOut: false });
  await insertMessages(trx, [row]);
  await enqueueMany(trx, sendJobs([row], "live"), ctx.now);
  return accepted(row);
}

export type BatchItem =
  & { index: number; clientRef: string | null }
  & (
    | {
      result: "queued";
      message: Omit<AcceptedMessage, "conversationId" | "direction">;
    }
    | { result: "skipped"; reason: "opted_out" }
    | { result: "failed"; error: { code: string; message: string } }
  );

export interface BatchResult {
  accepted: number;
  skipped: number;
  failed: number;
  items: BatchItem[];
}

function clientRefOf(raw: unknown): string | null {
  const v = (raw as { clientRef?: unknown } | null)?.clientRef;
  return typeof v === "string" ? v : null;
}

/**
 * Accepts a batch: each item independently queued, skipped or failed (in
 * request order); all accepted items and their jobs commit together at
 * campaign priority.
 */
export async function acceptBatch(
  trx: Executor,
  deps: { clock: Clock; config: { sendRatePerSecond: number } },
  accountId: string,
  input: {
    messages: unknown[];
    defaultPhoneNumberId?: string | number | undefined;
    respectOptOut?: boolean | undefined;
  },
): Promise<BatchResult> {
  const ctx: SendContext = {
    accountId,
    now: deps.clock.now(),
    lane: "batch",
    channels: new Map(),
  };
  const respectOptOut = input.respectOptOut ?? true;
  const items: BatchItem[] = [];
  const rows: MessageRow[] = [];
  const pacer = new BatchPacer(ctx.now, deps.config.sendRatePerSecond);
  const runAt = new Map<string, Date>();
  for (const [index, raw] of input.messages.entries()) {
    const clientRef = clientRefOf(raw);
    const parsed: ParseResult = parseSendMessage(raw, {
      defaultPhoneNumberId: input.defaultPhoneNumberId,
    });
    if (!parsed.ok) {
      items.push({
        index,
        clientRef,
        result: "failed",
        error: { code: parsed.problem.code, message: parsed.problem.message },
      });
      continue;
    }
    try {
      const { row, skipped } = await admit(trx, ctx, parsed.value, {
        respectOptOut,
      });
      if (skipped) {
        items.push({ index, clientRef, result: "skipped", reason: skipped });
        continue;
      }
      runAt.set(
        row.id,
        await pacer.dueAt(trx, ctx.channels.get(row.channel_id!)!),
      );
      // Rows go in one by one so later items see earlier items' contacts.
      await insertMessages(trx, [row]);
      rows.push(row);
      const { conversationId: _c, direction: _d, ...message } = accepted(row);
      items.push({ index, clientRef, result: "queued", message });
    } catch (err) {
      if (!(err instanceof SendRejected)) throw err;
      items.push({
        index,
        clientRef,
        result: "failed",
        error: { code: err.code, message: err.message },
      });
    }
  }
  await enqueueMany(trx, sendJobs(rows, "batch", runAt), ctx.now);
  return {
    accepted: rows.length,
    skipped: items.filter((i) => i.result === "skipped").length,
    failed: items.filter((i) => i.result === "failed").length,
    items,
  };
}

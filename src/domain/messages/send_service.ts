// Accepting sends: each message admitted, written and queued in the
// caller's transaction (a group-commit unit, see send_message_service.ts).
import type { Executor } from "../../db/schema.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import type { Clock } from "../../clock.ts";
import type { LookupCache } from "../../db/lookup_cache.ts";
import { toDbTime } from "../../db/time.ts";
import { enqueueCompiled, enqueueManyCompiled } from "../../jobs/queue.ts";
import {
  recordOutbound,
  recordOutboundMany,
} from "../conversations/conversation_service.ts";
import type { SendMessageInput } from "./outbound_schema.ts";
import {
  contentOf,
  type ParseResult,
  parseSendMessage,
  previewOf,
} from "./outbound.ts";
import { insertMessage, insertMessages } from "./message_repo.ts";
import { type Message, toMessageView } from "./message.ts";
import { recordEvent } from "../events/event_service.ts";
import {
  touchContactLastMessage,
  touchContactsLastMessage,
} from "./send_repo.ts";
import {
  admit,
  type Admitted,
  flushSendWrites,
  recipientOf,
  type SendContext,
  type SendingAgent,
  SendRejected,
  sendWrites,
} from "./send_admission_service.ts";
import {
  accepted,
  type AcceptedMessage,
  outboundMessage,
  sendJobs,
} from "./send_rows.ts";
import { noneOptedOut } from "../contacts/contact_guard_repo.ts";
import { HIGH_THROUGHPUT_RATE } from "../../upstream/send_governor.ts";
import { BatchPacer } from "./batch_pacer_service.ts";
import {
  admitInBatch,
  BatchRecipients,
  type LastMessage,
} from "./batch_recipients_service.ts";

export type { AcceptedMessage } from "./send_rows.ts";
export type { Lane } from "./send_admission_service.ts";

/** What accepting needs: the clock and, when there is one, the lookup cache. */
export interface AcceptDeps {
  clock: Clock;
  lookups?: LookupCache | undefined;
}

function buildMessage(
  ctx: SendContext,
  input: SendMessageInput,
  to: Admitted,
): { row: Message; last: LastMessage } {
  const content = contentOf(input);
  const row = outboundMessage(ctx, input, to, content);
  return {
    row,
    last: {
      conversationId: to.conversation.id,
      contactId: to.contact.id,
      messageId: row.id,
      preview: previewOf(input.type, content),
    },
  };
}

/** The internal `message.created` event of an accepted message (the panel's stream only). */
function createdEvent(row: Message) {
  return {
    accountId: row.accountId,
    type: "message.created" as const,
    data: toMessageView(row),
    createdAt: row.createdAt,
    lane: row.lane,
  };
}

/** Records a queued message as its conversation's and contact's last message. */
async function recordLast(
  trx: Executor,
  ctx: SendContext,
  last: LastMessage,
): Promise<void> {
  await recordOutbound(trx, {
    conversationId: last.conversationId,
    messageId: last.messageId,
    preview: last.preview,
    status: "queued",
    at: ctx.now,
  });
  await touchContactLastMessage(trx, last.contactId, toDbTime(ctx.now));
}

/**
 * Accepts one message, as a plan (src/db/planned_writes.ts) reading on `db`:
 * every rule is checked before anything is written; the message row, its
 * contact/conversation (and their events) and its send job are written on
 * `writes` (see SendWrites: at once inside SQLite's transaction, one batch
 * on libSQL), so they commit together.
 */
export async function acceptMessage(
  db: Executor,
  writes: PlannedWrites,
  deps: AcceptDeps,
  accountId: string,
  input: SendMessageInput,
  agent?: SendingAgent,
): Promise<AcceptedMessage> {
  const ctx: SendContext = {
    accountId,
    now: deps.clock.now(),
    lane: "live",
    lookups: deps.lookups,
    agent,
  };
  const out = sendWrites(db, writes);
  const to = await admit(db, ctx, input, { respectOptOut: false }, out);
  if (to === "opted_out") throw new Error("Unreachable: opt-out not asked");
  const { row, last } = buildMessage(ctx, input, to);
  await insertMessage(out.db, row);
  await recordEvent(out.db, createdEvent(row), out.events);
  await recordLast(out.db, ctx, last);
  // Compiled once; sendMessage wakes the live pool after the commit.
  await enqueueCompiled(out.db, sendJobs([row], "live")[0]!, ctx.now);
  await flushSendWrites(db, out);
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
 * request order), with the rules and results of acceptMessage() item by
 * item; the writes go per table for the whole batch (see
 * batch_recipients_service.ts), all committing together with the jobs at
 * campaign priority.
 */
export async function acceptBatch(
  db: Executor,
  writes: PlannedWrites,
  deps: AcceptDeps & {
    /** sendRateMax: SEND_RATE_MAX (1,000 when absent). */
    config: { sendRatePerSecond: number; sendRateMax?: number };
  },
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
    lookups: deps.lookups,
  };
  const respectOptOut = input.respectOptOut ?? true;
  const parsed: ParseResult[] = input.messages.map((raw) =>
    parseSendMessage(raw, { defaultPhoneNumberId: input.defaultPhoneNumberId })
  );
  const recipients = await BatchRecipients.load(
    db,
    ctx,
    parsed.flatMap((p) => p.ok ? knownRecipient(p.value) : []),
  );
  const items: BatchItem[] = [];
  const rows: Message[] = [];
  const pacer = new BatchPacer(ctx.now, {
    defaultRate: deps.config.sendRatePerSecond,
    maxRate: deps.config.sendRateMax ?? HIGH_THROUGHPUT_RATE,
  });
  const runAt = new Map<string, Date>();
  const lastOf = new Map<string, LastMessage>();
  for (const [index, raw] of input.messages.entries()) {
    const clientRef = clientRefOf(raw);
    const item = parsed[index]!;
    if (!item.ok) {
      items.push({
        index,
        clientRef,
        result: "failed",
        error: { code: item.problem.code, message: item.problem.message },
      });
      continue;
    }
    try {
      const to = await admitInBatch(db, ctx, item.value, {
        respectOptOut,
        recipients,
      });
      if (to === "opted_out") {
        items.push({ index, clientRef, result: "skipped", reason: to });
        continue;
      }
      // The count of what was queued before is read before any row goes in.
      const dueAt = await pacer.dueAt(db, to.channel);
      const { row, last } = buildMessage(ctx, item.value, to);
      // Same time for every item: the last one of a conversation is its last message.
      lastOf.set(last.conversationId, last);
      runAt.set(row.id, dueAt);
      rows.push(row);
      recipients.addEvent(createdEvent(row));
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
  // Nothing a later item checks reads the rows, so they all go in here.
  const last = [...lastOf.values()];
  const out = sendWrites(db, writes);
  const { existing, existingContactIds } = await recipients.write(out, last);
  await insertMessages(out.db, rows);
  await recordOutboundMany(out.db, {
    status: "queued",
    at: ctx.now,
    last: existing,
  });
  // Guards (libSQL): the conversations and contacts read are still there
  // (not joined into others), and none of them opted out meanwhile.
  if (existing.length > 0) writes.expectChanges(existing.length);
  await touchContactsLastMessage(
    out.db,
    existingContactIds,
    toDbTime(ctx.now),
  );
  if (existingContactIds.length > 0) {
    writes.expectChanges(existingContactIds.length);
    if (respectOptOut) writes.expectRow(noneOptedOut(existingContactIds));
  }
  // sendBatch wakes the batch pool after the commit.
  await enqueueManyCompiled(out.db, sendJobs(rows, "batch", runAt), ctx.now);
  await flushSendWrites(db, out);
  return {
    accepted: rows.length,
    skipped: items.filter((i) => i.result === "skipped").length,
    failed: items.filter((i) => i.result === "failed").length,
    items,
  };
}

/** The recipient of an item for the batch's lookup; a bad one fails later, in its turn. */
function knownRecipient(input: SendMessageInput) {
  try {
    return [recipientOf(input)];
  } catch (err) {
    if (err instanceof SendRejected) return [];
    throw err;
  }
}

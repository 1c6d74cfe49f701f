// The rules a send must pass, checked before anything is written, and the
// contact and conversation it is written to.
import type { Executor } from "../../db/schema.ts";
import type { LookupCache } from "../../db/lookup_cache.ts";
import { AppError, type ErrorCode } from "../../errors.ts";
import { toDbTime } from "../../db/time.ts";
import { toE164 } from "../phones/phone.ts";
import { type Channel, refusingRestriction } from "../channels/channel.ts";
import { findChannel } from "../channels/channel_repo.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { writerOf } from "../plan_writer.ts";
import { newId } from "../../ids.ts";
import { findContactOnChannel } from "../contacts/contact_service.ts";
import { insertContact } from "../contacts/contact_repo.ts";
import {
  contactStillExists,
  noContactsOf,
} from "../contacts/contact_guard_repo.ts";
import {
  type Contact,
  contactView,
  isBsuid,
  newContact,
} from "../contacts/contact.ts";
import type { Conversation } from "../conversations/conversation.ts";
import { conversationStillOf } from "../conversations/conversation_guard_repo.ts";
import {
  insertConversation,
  openConversation,
  openConversationRow,
} from "../conversations/conversation_write_repo.ts";
import { PlannedEvents, recordEvent } from "../events/event_service.ts";
import type { Template } from "../templates/template.ts";
import { findSendableTemplate } from "../templates/template_service.ts";
import { type TemplatePlan, templatePlan } from "../templates/template_plan.ts";
import { templateSendProblems } from "../templates/template_params.ts";
import type { SendMessageInput } from "./outbound_schema.ts";
import { needsServiceWindow } from "./outbound.ts";
import { findAccountMessageByWamid } from "./message_repo.ts";

export type Lane = "live" | "batch";

export interface SendContext {
  accountId: string;
  now: Date;
  lane: Lane;
  /** Cached channels and templates (the container's); without it each send reads them. */
  lookups?: LookupCache | undefined;
  /**
   * The agent sending (user token or panel session): the message must go to
   * a conversation it can see on the channel, else CONVERSATION_NOT_FOUND;
   * undefined for an API key.
   */
  agent?: SendingAgent | undefined;
}

/** An agent as a send sees it. */
export interface SendingAgent {
  id: string;
  /** "assigned": only conversations assigned to it. */
  visibility: "all" | "assigned";
}

/** A rule refused the message; nothing of it was written. */
export class SendRejected extends AppError {}

function reject(code: ErrorCode, message: string): never {
  throw new SendRejected(code, message);
}

/** Reads through the cache when there is one; loads run in `trx`, never on the Db. */
function cached<T>(
  ctx: SendContext,
  key: string,
  load: () => Promise<T | undefined>,
): Promise<T | undefined> {
  return ctx.lookups ? ctx.lookups.get(key, load) : load();
}

/** The connected channel of the account a send names, or SendRejected. */
export async function channelFor(
  trx: Executor,
  ctx: SendContext,
  id: string,
): Promise<Channel> {
  const channel = await cached(
    ctx,
    `channel:${ctx.accountId}:${id}`,
    () => findChannel(trx, ctx.accountId, id),
  );
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

/** What each template takes at send time, read once per cached template object. */
const plans = new WeakMap<Template, TemplatePlan>();

function planOf(template: Template): TemplatePlan {
  let plan = plans.get(template);
  if (!plan) {
    plan = templatePlan(template);
    plans.set(template, plan);
  }
  return plan;
}

async function checkTemplate(
  trx: Executor,
  ctx: SendContext,
  channel: Channel,
  input: Extract<SendMessageInput, { type: "template" }>,
): Promise<void> {
  const { name, language } = input.template;
  const query = {
    accountId: ctx.accountId,
    channel: { id: channel.id, wabaId: channel.wabaId },
    name,
    language: language.code,
  };
  const template: Template | undefined = await cached(
    ctx,
    `template:${ctx.accountId}\u0000${channel.id}\u0000${name}\u0000${language.code}`,
    () => findSendableTemplate(trx, query),
  );
  if (!template) {
    reject(
      "TEMPLATE_NOT_FOUND",
      `Cannot send template "${name}" (${language.code}): no such template for channel "${channel.id}" or globally`,
    );
  }
  if (template.status !== "approved") {
    reject(
      "TEMPLATE_NOT_APPROVED",
      `Cannot send template "${name}" (${language.code}): its status is "${template.status}"${
        template.metaStatus ? ` (Meta: ${template.metaStatus})` : ""
      }, only approved templates can be sent`,
    );
  }
  const problems = templateSendProblems(
    planOf(template),
    input.template.components,
  );
  if (problems.length) {
    throw new SendRejected(
      "VALIDATION_ERROR",
      `Cannot send template "${name}" (${language.code}): ${
        problems[0]!.message
      }`,
      { details: problems },
    );
  }
}

/**
 * A WABA Meta restricted refuses what the restriction covers: messages the
 * business starts (a template outside the service window) under
 * RESTRICTED_BIZ_INITIATED_MESSAGING, until it expires; replies inside an
 * open window still go (unless Meta restricted those too).
 */
function checkRestriction(
  channel: Channel,
  send: { businessInitiated: boolean; now: string },
): void {
  if (channel.restrictions.length === 0) return;
  const restriction = refusingRestriction(channel, send);
  if (!restriction) return;
  reject(
    "CHANNEL_RESTRICTED",
    `Cannot send message: Meta restricted WhatsApp Business Account "${channel.wabaId}" (${restriction.type}${
      restriction.until ? ` until ${restriction.until}` : ""
    }); ${
      send.businessInitiated
        ? "only replies inside an open service window can be sent"
        : "replies cannot be sent either"
    }`,
  );
}

/** What a send reads of its conversation (a whole Conversation will do). */
export type ConversationRef = Pick<
  Conversation,
  "id" | "serviceWindowExpiresAt"
>;

/** Who and where a message that passed every rule goes. */
export interface Admitted {
  channel: Channel;
  contact: Contact;
  conversation: ConversationRef;
}

/**
 * Where the writes of a send's plan (src/db/planned_writes.ts) go. Inside a
 * transaction (embedded SQLite: the group commit's, holding the write lock)
 * they run at once on it, exactly the statements and order of a write in
 * place; otherwise (libSQL) `db` records them for the unit's batch, with
 * the guards (`writes`) that fail it when what the plan read changed, and
 * the events are held and flushed at the plan's end (their deliveries read
 * first: see PlannedEvents).
 */
export interface SendWrites {
  /** Runs or records the plan's writes. */
  db: Executor;
  writes: PlannedWrites;
  /** The plan's events, written by flushSendWrites (undefined: written in place). */
  events: PlannedEvents | undefined;
}

/** The SendWrites of a plan reading on `reader` (see SendWrites). */
export function sendWrites(
  reader: Executor,
  writes: PlannedWrites,
): SendWrites {
  const db = writerOf(reader, writes);
  return {
    db,
    writes,
    events: db === reader ? undefined : new PlannedEvents(),
  };
}

/** Records the held events of a plan and their deliveries (read on `reader`). */
export async function flushSendWrites(
  reader: Executor,
  out: SendWrites,
): Promise<void> {
  await out.events?.flushPlanned(reader, out.writes);
}

/**
 * Checks one message against every rule (channel, recipient, opt-out,
 * service window, template, reaction target), reading on `db`, and, when it
 * passes, writes its contact and conversation when missing (with their
 * events) on `out`, guarded on what it read (see writeRecipient).
 * Throws SendRejected before writing anything when a rule fails; returns
 * "opted_out" when `respectOptOut` and the contact opted out.
 */
export async function admit(
  db: Executor,
  ctx: SendContext,
  input: SendMessageInput,
  options: { respectOptOut: boolean },
  out: SendWrites,
): Promise<Admitted | "opted_out"> {
  const channel = await channelFor(db, ctx, input.phoneNumberId).catch(
    (err) => {
      // An agent sees no other account's channel, nor a missing one: 404.
      if (
        ctx.agent && err instanceof SendRejected &&
        err.code === "INVALID_CHANNEL"
      ) notVisible(input.to);
      throw err;
    },
  );
  const recipient = recipientOf(input);
  // The contact and its conversation on the channel: one statement.
  const found = await findContactOnChannel(db, {
    accountId: ctx.accountId,
    channelId: channel.id,
    e164: recipient.phone,
    userId: recipient.userId,
  });
  const existing = found?.contact;
  if (options.respectOptOut && existing && !existing.optedIn) {
    return "opted_out";
  }
  const conversation = found?.conversation;
  if (ctx.agent) {
    // An agent answers its conversations: it never starts one.
    const visible = conversation &&
      (ctx.agent.visibility === "all" ||
        conversation.assignedTo === ctx.agent.id);
    if (!visible) notVisible(recipient.to);
  }
  await checkRules(db, ctx, input, {
    channel,
    to: recipient.to,
    conversation,
  });
  return await writeRecipient(out, ctx, {
    channel,
    recipient,
    contact: existing,
    conversation,
  });
}

/**
 * The contact and conversation of an admitted send, those missing written
 * (with their contact.created and conversation.created events) on `out`.
 * Its guards (libSQL: nothing can change inside SQLite's transaction): a
 * new contact, that none of its identity came meanwhile (another send made
 * it: the unit is planned again and finds it); a new conversation, that it
 * went in (none of the pair came meanwhile) and that its contact was not
 * joined into another; a found one, that it is still the contact's and,
 * for an agent that sees only its own, still assigned to it.
 */
async function writeRecipient(
  out: SendWrites,
  ctx: SendContext,
  found: {
    channel: Channel;
    recipient: ReturnType<typeof recipientOf>;
    contact: Contact | undefined;
    conversation: (ConversationRef & { assignedTo: string | null }) | undefined;
  },
): Promise<Admitted> {
  const { channel, recipient } = found;
  const at = toDbTime(ctx.now);
  let contact = found.contact;
  if (!contact) {
    const identity = { phoneNumber: recipient.phone, userId: recipient.userId };
    out.writes.expectRow(noContactsOf(ctx.accountId, [identity]));
    contact = newContact({
      ...identity,
      id: newId(),
      accountId: ctx.accountId,
      createdAt: at,
    });
    await insertContact(out.db, contact);
    await recordEvent(out.db, {
      accountId: ctx.accountId,
      type: "contact.created",
      data: contactView(contact),
      createdAt: at,
    }, out.events);
  } else if (!found.conversation) {
    out.writes.expectRow(contactStillExists(contact.id));
  }
  if (found.conversation) {
    const agent = ctx.agent?.visibility === "assigned"
      ? ctx.agent.id
      : undefined;
    out.writes.expectRow(
      conversationStillOf(found.conversation.id, contact.id, agent),
    );
    return { channel, contact, conversation: found.conversation };
  }
  const conversation = openConversation({
    id: newId(),
    accountId: ctx.accountId,
    contact,
    channelId: channel.id,
    at,
  });
  await insertConversation(
    out.db,
    openConversationRow({
      id: conversation.id,
      accountId: ctx.accountId,
      contactId: contact.id,
      channelId: channel.id,
      at,
    }),
  );
  out.writes.expectChanges(1);
  await recordEvent(out.db, {
    accountId: ctx.accountId,
    type: "conversation.created",
    data: conversation,
    createdAt: at,
  }, out.events);
  return { channel, contact, conversation };
}

function notVisible(to: string): never {
  reject(
    "CONVERSATION_NOT_FOUND",
    `Cannot send message: no conversation with "${to}" on this channel that this agent can see`,
  );
}

/** Who a send goes to: a BSUID, or a phone number read as E.164 (else INVALID_PHONE). */
export function recipientOf(
  input: SendMessageInput,
): { userId: string | null; phone: string | null; to: string } {
  const userId = isBsuid(input.to.trim()) ? input.to.trim() : null;
  const phone = userId ? null : toE164(input.to);
  if (!userId && !phone) {
    reject(
      "INVALID_PHONE",
      `Cannot send message: "${input.to}" is not a valid phone number with country code nor a business-scoped user id`,
    );
  }
  return { userId, phone, to: (userId ?? phone)! };
}

/**
 * The rules that read the recipient's conversation on the channel (undefined
 * when there is none yet): the service window, the template, the reaction's
 * target. Throws SendRejected.
 */
export async function checkRules(
  trx: Executor,
  ctx: SendContext,
  input: SendMessageInput,
  where: {
    channel: Channel;
    to: string;
    conversation?: ConversationRef | undefined;
  },
): Promise<void> {
  const { channel, to, conversation } = where;
  const now = toDbTime(ctx.now);
  const expires = conversation?.serviceWindowExpiresAt ?? null;
  const windowOpen = expires !== null && expires > now;
  if (needsServiceWindow(input.type)) {
    if (!windowOpen) {
      reject(
        "SERVICE_WINDOW_EXPIRED",
        expires
          ? `Cannot send free-form message: the service window for "${to}" closed at ${expires}; send an approved template instead`
          : `Cannot send free-form message: "${to}" has not written to this channel, so no service window is open; send an approved template instead`,
      );
    }
  }
  checkRestriction(channel, { businessInitiated: !windowOpen, now });
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
}

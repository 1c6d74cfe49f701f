import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import { isBsuid } from "../contacts/contact.ts";
import type { Clock } from "../../clock.ts";
import { AppError } from "../../errors.ts";
import { toDbTime } from "../../db/time.ts";
import { type CursorPage, decodeCursor, toCursorPage } from "../pagination.ts";
import { phoneVariants } from "../phones/phone.ts";
import { findAccountById, findActiveAgent } from "../accounts/account_repo.ts";
import { findChannelsByPhone } from "../channels/channel_repo.ts";
import { type MessageView, toMessageView } from "../messages/message.ts";
import * as messages from "../messages/message_read_repo.ts";
import {
  type Conversation,
  type ConversationStatus,
  normalizeInstagram,
  type Viewer,
} from "./conversation.ts";
import * as repo from "./conversation_repo.ts";
import { recordEvent } from "../events/event_service.ts";
import { runPlannedWithEvents } from "../events/planned_event_service.ts";
import { assignmentUnchanged } from "./conversation_write_repo.ts";

// The messaging engine calls these inside its own transaction.
export { findOrCreateConversation } from "./conversation_create_service.ts";
export {
  recordInbound,
  recordOutbound,
  recordOutboundMany,
  resetUnread,
  updateLastMessageStatus,
} from "./conversation_write_repo.ts";

export interface Deps {
  db: Db;
  clock: Clock;
}

/** Most alternatives `resolve` returns besides the best match. */
export const RESOLVE_MAX_ALTERNATIVES = 20;

function notFound(id: string): AppError {
  return new AppError(
    "CONVERSATION_NOT_FOUND",
    `Cannot find conversation "${id}"`,
  );
}

const positionOf = (c: { createdAt: string; id: string }) => ({
  at: c.createdAt,
  id: c.id,
});

/** Lists the viewer's conversations newest first, one cursor page at a time. */
export async function listConversations(
  deps: { db: Db },
  input: {
    viewer: Viewer;
    limit: number;
    cursor?: string | undefined;
    status?: ConversationStatus | undefined;
    search?: string | undefined;
  },
): Promise<CursorPage<Conversation>> {
  const rows = await repo.listConversations(deps.db, {
    viewer: input.viewer,
    limit: input.limit + 1,
    ...(input.cursor !== undefined && { after: decodeCursor(input.cursor) }),
    ...(input.status !== undefined && { status: input.status }),
    ...(input.search !== undefined && { search: input.search }),
  });
  return toCursorPage(rows, input.limit, positionOf);
}

/** One conversation the viewer may see, or CONVERSATION_NOT_FOUND. */
export async function getConversation(
  deps: { db: Db },
  input: { viewer: Viewer; id: string },
): Promise<Conversation> {
  const found = await repo.findConversation(deps.db, input.viewer, input.id);
  if (!found) throw notFound(input.id);
  return found;
}

/**
 * Whether the viewer sees this conversation of its account: always, but an
 * `assigned` agent only the conversations assigned to it. (The caller has
 * found the conversation in the viewer's account.)
 */
export async function seesConversation(
  deps: { db: Db },
  viewer: Viewer,
  conversationId: string,
): Promise<boolean> {
  if (viewer.onlyAssignedTo === undefined) return true;
  return (await repo.findConversation(deps.db, viewer, conversationId)) !==
    undefined;
}

/** Whether the viewer sees this contact of its account: an `assigned` agent, one of whose conversations is assigned to it. */
export async function seesContact(
  deps: { db: Db },
  viewer: Viewer,
  contactId: string,
): Promise<boolean> {
  if (viewer.onlyAssignedTo === undefined) return true;
  return await repo.contactHasVisibleConversation(deps.db, viewer, contactId);
}

/** Every spelling of `phone` in the account's country; empty when it is not a number. */
async function readPhone(
  deps: { db: Db },
  accountId: string,
  phone: string,
): Promise<string[]> {
  const account = await findAccountById(deps.db, accountId);
  return phoneVariants(phone, account?.defaultCountry ?? "AR");
}

function invalidPhone(phone: string): AppError {
  return new AppError(
    "INVALID_PHONE",
    `Cannot read phone number "${phone}": it is not a phone number`,
  );
}

async function variantsOf(
  deps: { db: Db },
  accountId: string,
  phone: string,
): Promise<string[]> {
  const variants = await readPhone(deps, accountId, phone);
  if (variants.length === 0) throw invalidPhone(phone);
  return variants;
}

/** The most recent conversation whose contact has any spelling of `phone`. */
export async function findConversationByPhone(
  deps: { db: Db },
  input: { viewer: Viewer; phone: string },
): Promise<Conversation> {
  const phones = await variantsOf(deps, input.viewer.accountId, input.phone);
  const [found] = await repo.findMatchingConversations(deps.db, {
    viewer: input.viewer,
    phones,
    limit: 1,
  });
  if (!found) {
    throw new AppError(
      "NOT_FOUND",
      `Cannot find a conversation for phone number "${input.phone}"`,
    );
  }
  return found;
}

export interface ResolveInput {
  viewer: Viewer;
  phone?: string | undefined;
  email?: string | undefined;
  instagram?: string | undefined;
  /** The business number of a channel; its conversations are preferred. */
  line?: string | undefined;
  /** A channel id; its conversations are preferred. */
  channel?: string | undefined;
}

export interface ResolveResult {
  conversationId: string | null;
  alternatives: string[];
}

/**
 * Finds the conversations of contacts matching any given identifier; the
 * best is the most recent, preferring the given line or channel. An
 * unusable identifier (a phone that is not a number, an empty e-mail or
 * user name) is left out while another one is usable.
 */
export async function resolveConversation(
  deps: { db: Db },
  input: ResolveInput,
): Promise<ResolveResult> {
  const { viewer } = input;
  const instagram = normalizeInstagram(input.instagram ?? "") || undefined;
  const email = input.email?.trim() || undefined;
  const phone = input.phone?.trim() || undefined;
  // A username customer is known by BSUID only: `phone` takes it too, matched whole.
  const userId = phone && isBsuid(phone) ? phone : undefined;
  const phones = phone && !userId
    ? await readPhone(deps, viewer.accountId, phone)
    : [];
  if (phones.length === 0 && !userId && !email && !instagram) {
    if (phone) throw invalidPhone(phone);
    throw new AppError(
      "VALIDATION_ERROR",
      'Cannot resolve conversation: give at least one of "phone", "email" or "instagram"',
    );
  }
  const preferred = input.channel ? [input.channel] : [];
  if (input.line) {
    for (const number of await variantsOf(deps, viewer.accountId, input.line)) {
      const channels = await findChannelsByPhone(
        deps.db,
        viewer.accountId,
        number,
      );
      preferred.push(...channels.map((ch) => ch.id));
    }
  }
  const found = await repo.findMatchingConversations(deps.db, {
    viewer,
    ...(phones.length > 0 && { phones }),
    ...(userId && { userId }),
    ...(email && { email }),
    ...(instagram && { instagram }),
    preferredChannelIds: preferred,
    limit: RESOLVE_MAX_ALTERNATIVES + 1,
  });
  const [best, ...rest] = found;
  return {
    conversationId: best?.id ?? null,
    alternatives: rest.map((c) => c.id),
  };
}

/**
 * Changes status and/or assignee (an agent of the account, else
 * INVALID_AGENT; an `assigned` agent only to itself); returns the updated
 * conversation. Atomic without a transaction on libSQL: its reads, then a
 * batch guarded on the status and assignee read (the event's previous
 * values), planned again when another change got there first.
 */
export async function updateConversation(
  deps: Deps & { commits: Pick<GroupCommit, "runPlanned"> },
  input: {
    viewer: Viewer;
    id: string;
    status?: ConversationStatus | undefined;
    assignedTo?: string | null | undefined;
  },
): Promise<Conversation> {
  await getConversation(deps, input); // visible to the viewer, else 404
  const agentId = input.assignedTo;
  const self = input.viewer.onlyAssignedTo;
  if (self !== undefined && agentId !== undefined && agentId !== self) {
    throw new AppError(
      "INSUFFICIENT_SCOPE",
      `Cannot assign conversation "${input.id}": an agent with visibility "assigned" assigns conversations only to itself`,
    );
  }
  if (
    agentId &&
    !(await findActiveAgent(deps.db, input.viewer.accountId, agentId))
  ) {
    throw new AppError(
      "INVALID_AGENT",
      `Cannot assign conversation "${input.id}": "${agentId}" is not an agent of this account`,
    );
  }
  const at = deps.clock.now();
  // Read back for everyone: an `assigned` agent that unassigned itself no
  // longer sees it, but gets its answer.
  const all = { ...input, viewer: { accountId: input.viewer.accountId } };
  return await runPlannedWithEvents(deps.commits, async (db, planned) => {
    const current = await repo.findConversation(db, all.viewer, input.id);
    if (!current) throw notFound(input.id);
    planned.writes.expectRow(assignmentUnchanged(current));
    await repo.updateConversation(planned.writes.db, input.id, {
      updated_at: toDbTime(at),
      ...(input.status !== undefined && { status: input.status }),
      ...(input.assignedTo !== undefined && { assigned_to: input.assignedTo }),
    });
    const after: Conversation = {
      ...current,
      ...(input.status !== undefined && { status: input.status }),
      ...(input.assignedTo !== undefined && { assignedTo: input.assignedTo }),
    };
    if (
      after.status !== current.status || after.assignedTo !== current.assignedTo
    ) {
      await recordEvent(planned.writes.db, {
        accountId: input.viewer.accountId,
        type: "conversation.updated",
        data: {
          ...after,
          previousStatus: current.status,
          previousAssignedTo: current.assignedTo,
        },
        createdAt: at,
      }, planned.events);
    }
    return after;
  });
}

/** A visible conversation's messages oldest first, one cursor page at a time. */
export async function listConversationMessages(
  deps: { db: Db },
  input: {
    viewer: Viewer;
    conversationId: string;
    limit: number;
    cursor?: string | undefined;
  },
): Promise<CursorPage<MessageView>> {
  const after = input.cursor === undefined
    ? undefined
    : decodeCursor(input.cursor);
  await getConversation(deps, {
    viewer: input.viewer,
    id: input.conversationId,
  });
  const rows = await messages.listConversationMessages(deps.db, {
    accountId: input.viewer.accountId,
    conversationId: input.conversationId,
    limit: input.limit + 1,
    ...(after && { after }),
  });
  return toCursorPage(rows.map(toMessageView), input.limit, positionOf);
}

/** A contact's conversations newest first; CONTACT_NOT_FOUND for another account's contact. */
export async function listContactConversations(
  deps: { db: Db },
  input: {
    viewer: Viewer;
    contactId: string;
    limit: number;
    cursor?: string | undefined;
  },
): Promise<CursorPage<Conversation>> {
  const after = input.cursor === undefined
    ? undefined
    : decodeCursor(input.cursor);
  const exists = await repo.contactExists(
    deps.db,
    input.viewer.accountId,
    input.contactId,
  ) && await seesContact(deps, input.viewer, input.contactId);
  if (!exists) {
    throw new AppError(
      "CONTACT_NOT_FOUND",
      `Cannot find contact "${input.contactId}"`,
    );
  }
  const rows = await repo.listContactConversations(deps.db, {
    viewer: input.viewer,
    contactId: input.contactId,
    limit: input.limit + 1,
    ...(after && { after }),
  });
  return toCursorPage(rows, input.limit, positionOf);
}

/** The panel's inbox filters (GET /api/v1/conversations). */
export interface InboxQuery {
  viewer: Viewer;
  limit: number;
  cursor?: string | undefined;
  status?: ConversationStatus | undefined;
  /** An agent id, or null for unassigned conversations. */
  assignedTo?: string | null | undefined;
  unread?: boolean | undefined;
  /** Open windows that close within this many ms from now. */
  windowClosingWithinMs?: number | undefined;
  search?: string | undefined;
}

/** The viewer's conversations by last activity, newest first, with the panel's filters. */
export async function listInbox(
  deps: Deps,
  input: InboxQuery,
): Promise<CursorPage<Conversation>> {
  const now = deps.clock.now();
  const rows = await repo.listInbox(deps.db, {
    viewer: input.viewer,
    limit: input.limit + 1,
    ...(input.cursor !== undefined && { after: decodeCursor(input.cursor) }),
    filter: {
      ...(input.status !== undefined && { status: input.status }),
      ...(input.assignedTo !== undefined && { assignedTo: input.assignedTo }),
      ...(input.unread && { unread: true }),
      ...(input.windowClosingWithinMs !== undefined && {
        windowClosing: {
          from: toDbTime(now),
          to: toDbTime(new Date(now.getTime() + input.windowClosingWithinMs)),
        },
      }),
      ...(input.search !== undefined && { search: input.search }),
    },
  });
  const page = toCursorPage(rows, input.limit, (c) => ({
    at: c.activity,
    id: c.id,
  }));
  return {
    ...page,
    items: page.items.map(({ activity: _a, ...c }) => c),
  };
}

/**
 * A visible conversation's newest messages, oldest first within the page;
 * `cursor` pages back to older ones (the panel opens a thread at its end).
 */
export async function listLatestMessages(
  deps: { db: Db },
  input: {
    viewer: Viewer;
    conversationId: string;
    limit: number;
    before?: string | undefined;
  },
): Promise<CursorPage<MessageView>> {
  const before = input.before === undefined
    ? undefined
    : decodeCursor(input.before);
  await getConversation(deps, {
    viewer: input.viewer,
    id: input.conversationId,
  });
  const rows = await messages.latestConversationMessages(deps.db, {
    accountId: input.viewer.accountId,
    conversationId: input.conversationId,
    limit: input.limit + 1,
    ...(before && { before }),
  });
  const page = toCursorPage(rows, input.limit, positionOf);
  return { ...page, items: page.items.reverse().map(toMessageView) };
}

import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import { writerOf } from "../plan_writer.ts";
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import type { Logger } from "../../log.ts";
import { AppError } from "../../errors.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import { type GraphApi, UpstreamError } from "../../upstream/graph_api.ts";
import { findChannel } from "../channels/channel_repo.ts";
import { channelAccessToken } from "../channels/channel_service.ts";
import { findConversation } from "../conversations/conversation_repo.ts";
import {
  resetUnread,
  seesConversation,
} from "../conversations/conversation_service.ts";
import type { Viewer } from "../conversations/conversation.ts";
import { recordEvent } from "../events/event_service.ts";
import {
  findAccountMessageByWamid,
  latestInboundWithWamid,
} from "./message_repo.ts";

export interface ReadDeps {
  db: Db;
  /** The read's writes go in a unit of the group commit (markRead). */
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
  secrets: SecretBox;
  graph: GraphApi;
  log: Logger;
}

export interface ReadResult {
  conversationId: string;
  markedMessageId: string | null;
  deliveredToMeta: boolean;
}

export type TypingReason =
  | "no_phone_number"
  | "no_inbound_to_anchor"
  | "phone_not_found"
  | "meta_rejected"
  | "meta_unreachable"
  | "typing_off_noop";

export interface TypingResult {
  conversationId: string;
  status: "on" | "off";
  deliveredToMeta: boolean;
  reason?: TypingReason;
}

/** Meta accepts read receipts (and so typing) for messages up to 30 days old. */
const ANCHOR_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

async function requireConversation(
  deps: ReadDeps,
  viewer: Viewer,
  id: string,
) {
  const conversation = await findConversation(deps.db, viewer, id);
  if (!conversation) {
    throw new AppError(
      "CONVERSATION_NOT_FOUND",
      `Cannot find conversation "${id}"`,
    );
  }
  return conversation;
}

type UpstreamOutcome = { ok: true } | {
  ok: false;
  reason: "meta_rejected" | "meta_unreachable";
};

async function callMarkRead(
  deps: ReadDeps,
  accountId: string,
  channelId: string,
  wamid: string,
  typing: boolean,
): Promise<UpstreamOutcome | "phone_not_found"> {
  const channel = await findChannel(deps.db, accountId, channelId);
  if (!channel) return "phone_not_found";
  try {
    const accessToken = await channelAccessToken(deps, channel.id);
    await deps.graph.markRead(
      { phoneNumberId: channel.upstreamPhoneNumberId, accessToken },
      wamid,
      { typing },
    );
    return { ok: true };
  } catch (err) {
    deps.log.warn("Mark-read call failed", { err, channelId, wamid });
    const unreachable = err instanceof UpstreamError &&
      (err.category === "network" || err.category === "upstream_transient");
    return {
      ok: false,
      reason: unreachable ? "meta_unreachable" : "meta_rejected",
    };
  }
}

/**
 * Resets the unread count; when it was not 0, records an internal
 * `conversation.read` event (the panel's other tabs and agents hear of it)
 * with it, as one group-commit unit: on libSQL one write batch, guarded on
 * the count the read found still being reset by this write (another reset
 * meanwhile: read again, nothing to do).
 */
async function markRead(
  deps: ReadDeps,
  accountId: string,
  conversationId: string,
): Promise<void> {
  const at = deps.clock.now();
  await deps.commits.runPlanned(async (db, writes) => {
    const conversation = await findConversation(
      db,
      { accountId },
      conversationId,
    );
    if (!conversation || conversation.unreadCount === 0) return () => {};
    const w = writerOf(db, writes);
    await resetUnread(w, conversationId);
    writes.expectChanges(1);
    await recordEvent(w, {
      accountId,
      type: "conversation.read",
      data: { conversationId, unreadCount: 0 },
      createdAt: at,
    });
    return () => {};
  });
}

/** Resets the unread count and sends a read receipt for the newest inbound message with an upstream id. */
export async function markConversationRead(
  deps: ReadDeps,
  viewer: Viewer,
  conversationId: string,
): Promise<ReadResult> {
  const { accountId } = viewer;
  const conversation = await requireConversation(
    deps,
    viewer,
    conversationId,
  );
  await markRead(deps, accountId, conversation.id);
  const latest = await latestInboundWithWamid(deps.db, conversation.id);
  if (!latest || !conversation.phoneNumberId) {
    return {
      conversationId,
      markedMessageId: latest?.id ?? null,
      deliveredToMeta: false,
    };
  }
  const outcome = await callMarkRead(
    deps,
    accountId,
    conversation.phoneNumberId,
    latest.wa_message_id!,
    false,
  );
  return {
    conversationId,
    markedMessageId: latest.id,
    deliveredToMeta: typeof outcome === "object" && outcome.ok,
  };
}

/** Marks one inbound message read by its upstream id (404 when unknown or outbound). */
export async function markMessageRead(
  deps: ReadDeps,
  viewer: Viewer,
  wamid: string,
): Promise<ReadResult> {
  const { accountId } = viewer;
  const message = await findAccountMessageByWamid(deps.db, accountId, wamid, {
    direction: "inbound",
  });
  if (
    !message ||
    !await seesConversation(deps, viewer, message.conversation_id)
  ) {
    throw new AppError(
      "MESSAGE_NOT_FOUND",
      `Cannot find inbound message with waMessageId "${wamid}"`,
    );
  }
  await markRead(deps, accountId, message.conversation_id);
  if (!message.channel_id) {
    return {
      conversationId: message.conversation_id,
      markedMessageId: message.id,
      deliveredToMeta: false,
    };
  }
  const outcome = await callMarkRead(
    deps,
    accountId,
    message.channel_id,
    wamid,
    false,
  );
  return {
    conversationId: message.conversation_id,
    markedMessageId: message.id,
    deliveredToMeta: typeof outcome === "object" && outcome.ok,
  };
}

/** Shows the typing indicator (anchored on the newest inbound message); `off` is a no-op upstream. */
export async function setTyping(
  deps: ReadDeps,
  viewer: Viewer,
  conversationId: string,
  status: "on" | "off",
): Promise<TypingResult> {
  const { accountId } = viewer;
  const conversation = await requireConversation(
    deps,
    viewer,
    conversationId,
  );
  const base = { conversationId, status };
  if (status === "off") {
    return { ...base, deliveredToMeta: false, reason: "typing_off_noop" };
  }
  if (!conversation.phoneNumberId) {
    return { ...base, deliveredToMeta: false, reason: "no_phone_number" };
  }
  const since = toDbTime(addMs(deps.clock.now(), -ANCHOR_MAX_AGE_MS));
  const anchor = await latestInboundWithWamid(deps.db, conversation.id, since);
  if (!anchor) {
    return { ...base, deliveredToMeta: false, reason: "no_inbound_to_anchor" };
  }
  const outcome = await callMarkRead(
    deps,
    accountId,
    conversation.phoneNumberId,
    anchor.wa_message_id!,
    true,
  );
  if (outcome === "phone_not_found") {
    return { ...base, deliveredToMeta: false, reason: "phone_not_found" };
  }
  return outcome.ok
    ? { ...base, deliveredToMeta: true }
    : { ...base, deliveredToMeta: false, reason: outcome.reason };
}

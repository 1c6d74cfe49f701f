// The sends on their way. Each is kept in IndexedDB before it is posted and
// until the server answers, with its Idempotency-Key: a network failure, a
// 429, a reload, a crash or a closed laptop leaves it there, and the next
// attempt (on reconnect, after a backoff, or when the page opens again)
// posts it with the same key, so it goes out once whatever happened to the
// first answer. The key is also the message's clientRef, so the live
// stream's copy replaces the "sending" bubble.
import { api, ApiError, NetworkError } from "./api.ts";
import { run } from "./idb.ts";
import { t } from "./i18n.ts";
import { changed, now, reportError, store, thread } from "./store.ts";
import type { Conversation, Message } from "./types.ts";

interface Outgoing {
  key: string;
  agentId: string;
  conversationId: string;
  body: Record<string, unknown>;
  /** The "sending" bubble, shown again after a reload. */
  local: Message;
  /** When it was first posted (server clock, ms). */
  at: number;
}

/**
 * How long a stored send may still be posted again: the server keeps an
 * Idempotency-Key for 24 hours, after which a repeat could send twice; a
 * send older than this is shown as unconfirmed instead.
 */
const REPOST_WITHIN_MS = 23 * 3600_000;

const outbox = new Map<string, Outgoing>();
const inFlight = new Set<string>();
const timers = new Map<string, { timer: number; delay: number }>();

/** Stores a send; gives up waiting after a second (the send goes ahead unstored). */
function keep(item: Outgoing): Promise<void> {
  return Promise.race([
    run<void>("outbox", "readwrite", (s) => s.put(item, item.key)),
    new Promise<void>((resolve) => setTimeout(resolve, 1_000)),
  ]);
}

function drop(key: string): void {
  outbox.delete(key);
  const retry = timers.get(key);
  if (retry) clearTimeout(retry.timer);
  timers.delete(key);
  void run("outbox", "readwrite", (s) => s.delete(key)).catch(() => {});
}

/**
 * Sends a message of the conversation: shown at once as "sending", stored,
 * then posted; it leaves the outbox only when the server has answered.
 */
export async function sendMessage(
  c: Conversation,
  body: Record<string, unknown>,
): Promise<void> {
  const key = crypto.randomUUID();
  const local: Message = {
    id: `local:${key}`,
    conversationId: c.id,
    direction: "outbound",
    type: String(body.type),
    content: (body[String(body.type)] ?? {}) as Record<string, unknown>,
    status: "queued",
    waMessageId: null,
    errorCode: null,
    errorMessage: null,
    mediaId: null,
    context: null,
    createdAt: new Date(now()).toISOString(),
    pending: "sending",
  };
  if (local.type === "text") {
    local.content = { text: (body.text as { body: string }).body };
  }
  const item: Outgoing = {
    key,
    agentId: store.boot.agent.id,
    conversationId: c.id,
    body: {
      phoneNumberId: c.phoneNumberId,
      to: c.contact.phoneNumber ?? c.contact.userId ?? "",
      clientRef: key,
      ...body,
    },
    local,
    at: now(),
  };
  thread(c.id).messages.push({ ...local });
  changed();
  outbox.set(key, item);
  // Stored before it is posted: a reload from here on posts it again with
  // its key. Without IndexedDB (a private window) it is still sent.
  await keep(item).catch(() => {});
  await post(item);
}

function localOf(item: Outgoing): Message | undefined {
  return thread(item.conversationId).messages.find((m) =>
    m.id === `local:${item.key}`
  );
}

/**
 * A failure worth trying again with the same key: the send may yet go out
 * (a 401 too: it is posted again once the agent has signed in).
 */
function retryable(err: unknown): boolean {
  return err instanceof NetworkError ||
    (err instanceof ApiError &&
      (err.status === 429 || err.status === 401 ||
        err.code === "IDEMPOTENCY_KEY_IN_USE"));
}

/** Shows a send too old to post again as failed, for the agent to check. */
function expire(item: Outgoing): void {
  drop(item.key);
  const local = localOf(item);
  if (local) {
    local.pending = undefined;
    local.status = "failed";
    local.errorMessage = t("unconfirmed");
  }
  changed();
}

async function post(item: Outgoing): Promise<void> {
  if (inFlight.has(item.key) || !outbox.has(item.key)) return;
  // The server forgets a key after 24 hours: past that a repeat could send twice.
  if (now() - item.at > REPOST_WITHIN_MS) return expire(item);
  inFlight.add(item.key);
  const t_ = thread(item.conversationId);
  try {
    const { data } = await api<{ data: { id: string } }>(
      "POST",
      "/api/v2/messages",
      { body: item.body, headers: { "Idempotency-Key": item.key } },
    );
    drop(item.key);
    const at = t_.messages.findIndex((m) => m.id === `local:${item.key}`);
    if (at >= 0) {
      if (t_.messages.some((m) => m.id === data.id)) t_.messages.splice(at, 1);
      else {t_.messages[at] = {
          ...t_.messages[at]!,
          id: data.id,
          pending: undefined,
        };}
    }
  } catch (err) {
    const local = localOf(item);
    if (retryable(err)) {
      if (local) local.pending = "retrying";
      // After a backoff, and at once when the stream reconnects.
      if (!(err instanceof ApiError && err.status === 401)) later(item);
    } else {
      drop(item.key);
      if (local) {
        local.pending = undefined;
        local.status = "failed";
        local.errorMessage = (err as Error).message;
      }
      // A reaction has no bubble to show its failure on.
      if (item.body.type === "reaction") reportError(err);
    }
  } finally {
    inFlight.delete(item.key);
  }
  changed();
}

/** Posts again after 1, 2, 4 ... 30 s with jitter (a 429, a key still in use). */
function later(item: Outgoing): void {
  const previous = timers.get(item.key);
  if (previous) clearTimeout(previous.timer);
  const delay = Math.min((previous?.delay ?? 500) * 2, 30_000);
  const timer = setTimeout(
    () => void post(item),
    delay * (0.75 + Math.random() / 2),
  );
  timers.set(item.key, { timer, delay });
}

/** Posts again every send held back (after a reconnect: the stream's hello). */
export function retryOutbox(): void {
  for (const item of outbox.values()) void post(item);
}

/**
 * Brings back the sends of this agent that a reload, a crash or a closed
 * tab left unanswered: shown as "retrying" in their threads and posted
 * again with their keys at the stream's hello. One too old to repost
 * safely is shown as failed, for the agent to check before sending again.
 */
export async function restoreOutbox(): Promise<void> {
  const items = await run<Outgoing[]>("outbox", "readonly", (s) => s.getAll())
    .catch(() => [] as Outgoing[]);
  const agentId = store.boot.agent.id;
  for (const item of items) {
    const old = now() - item.at > REPOST_WITHIN_MS;
    if (item.agentId !== agentId) {
      // Another agent's on this browser: theirs to send, gone once stale.
      if (old) drop(item.key);
      continue;
    }
    if (outbox.has(item.key)) continue;
    const local: Message = { ...item.local, pending: "retrying" };
    if (old) {
      drop(item.key);
      local.pending = undefined;
      local.status = "failed";
      local.errorMessage = t("unconfirmed");
    } else outbox.set(item.key, item);
    const messages = thread(item.conversationId).messages;
    if (!messages.some((m) => m.id === local.id)) messages.push(local);
  }
  changed();
}

// The panel's state: the conversation list, the open threads, what the live
// stream changes, and the sends on their way. Components read it and
// re-render on change (useStore).
import { useEffect, useState } from "preact/hooks";
import { api, ApiError, type Page } from "./api.ts";
import type {
  Agent,
  Boot,
  Conversation,
  Message,
  Status,
  Template,
} from "./types.ts";

export interface Filter {
  status: "" | Conversation["status"];
  assignee: "" | "me" | "none";
  unread: boolean;
  windowClosing: boolean;
  search: string;
}

export interface Thread {
  messages: Message[];
  cursor: string | null;
  hasMore: boolean;
  loaded: boolean;
}

export type Route =
  | { name: "list" }
  | { name: "conversation"; id: string }
  | { name: "resolve"; query: string };

export type Connection = "live" | "reconnecting" | "offline";

const RANK: Record<Status, number> = {
  queued: 0,
  sent: 1,
  delivered: 2,
  read: 3,
  failed: 4,
};

const listeners = new Set<() => void>();
let scheduled = false;

/** Tells every component that reads the store to render again (once per turn). */
export function changed(): void {
  if (scheduled) return;
  scheduled = true;
  queueMicrotask(() => {
    scheduled = false;
    for (const listener of listeners) listener();
  });
}

/** Re-renders the calling component whenever the store changes. */
export function useStore(): typeof store {
  const [, setN] = useState(0);
  useEffect(() => {
    const listener = () => setN((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return store;
}

export const store = {
  boot: undefined as unknown as Boot,
  /** Server time minus browser time: countdowns follow the server's clock. */
  offsetMs: 0,
  route: { name: "list" } as Route,
  filter: {
    status: "",
    assignee: "",
    unread: false,
    windowClosing: false,
    search: "",
  } as Filter,
  list: [] as Conversation[],
  listCursor: null as string | null,
  listHasMore: false,
  listLoading: false,
  listError: "",
  threads: new Map<string, Thread>(),
  connection: "reconnecting" as Connection,
  agents: [] as Agent[],
  templates: null as Template[] | null,
  error: "",
  helpOpen: false,
  templateOpen: false,
};

export function now(): number {
  return Date.now() + store.offsetMs;
}

export function setServerTime(iso: string): void {
  store.offsetMs = Date.parse(iso) - Date.now();
}

function activity(c: Conversation): string {
  return c.lastMessageAt ?? c.createdAt;
}

function sortList(): void {
  store.list.sort((a, b) =>
    activity(b).localeCompare(activity(a)) || b.id.localeCompare(a.id)
  );
}

function listQuery(cursor: string | null): string {
  const f = store.filter;
  const q = new URLSearchParams({ limit: "50" });
  if (cursor) q.set("cursor", cursor);
  if (f.status) q.set("status", f.status);
  if (f.assignee) q.set("assignee", f.assignee);
  if (f.unread) q.set("unread", "true");
  if (f.windowClosing) q.set("windowClosing", "true");
  if (f.search.trim()) q.set("search", f.search.trim());
  return `/api/v1/conversations?${q}`;
}

let listSeq = 0;

/** Loads the first page (or, with `more`, the next one) of the list. */
export async function loadList(more = false): Promise<void> {
  const seq = ++listSeq;
  store.listLoading = true;
  changed();
  try {
    const page = await api<Page<Conversation>>(
      "GET",
      listQuery(more ? store.listCursor : null),
    );
    if (seq !== listSeq) return;
    store.list = more ? [...store.list, ...page.data] : page.data;
    store.listCursor = page.cursor;
    store.listHasMore = page.hasMore;
    store.listError = "";
  } catch (err) {
    if (seq === listSeq) store.listError = (err as Error).message;
  } finally {
    if (seq === listSeq) store.listLoading = false;
    changed();
  }
}

/** Whether a conversation belongs in the list under the current filters. */
function matches(c: Conversation): boolean {
  const f = store.filter;
  if (f.status && c.status !== f.status) return false;
  if (f.assignee === "me" && c.assignedTo !== store.boot.agent.id) return false;
  if (f.assignee === "none" && c.assignedTo !== null) return false;
  if (f.unread && c.unreadCount === 0) return false;
  if (f.windowClosing) {
    const left = Date.parse(c.serviceWindowExpiresAt ?? "") - now();
    if (!(left > 0 && left <= 2 * 3600_000)) return false;
  }
  const mine = store.boot.agent;
  if (mine.visibility === "assigned" && c.assignedTo !== mine.id) return false;
  return true;
}

/** Puts a conversation's latest state in the list (or takes it out). */
export function upsertConversation(c: Conversation): void {
  const at = store.list.findIndex((x) => x.id === c.id);
  const searching = store.filter.search.trim() !== "";
  if (!matches(c)) {
    if (at >= 0) store.list.splice(at, 1);
  } else if (at >= 0) store.list[at] = c;
  else if (!searching) store.list.push(c);
  sortList();
  changed();
}

export function conversation(id: string): Conversation | undefined {
  return store.list.find((c) => c.id === id) ?? opened.get(id);
}

/** Conversations opened that the list does not show (a deep link, a filter). */
const opened = new Map<string, Conversation>();

const refreshing = new Map<string, Promise<void>>();

/** Reads a conversation again (after an event about it); gone when no longer visible. */
export function refreshConversation(id: string): Promise<void> {
  let p = refreshing.get(id);
  if (p) return p;
  p = (async () => {
    try {
      const { data } = await api<{ data: Conversation }>(
        "GET",
        `/api/v2/conversations/${id}`,
      );
      opened.set(id, data);
      upsertConversation(data);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        store.list = store.list.filter((c) => c.id !== id);
        opened.delete(id);
        changed();
      }
    } finally {
      refreshing.delete(id);
    }
  })();
  refreshing.set(id, p);
  return p;
}

export function thread(id: string): Thread {
  let t = store.threads.get(id);
  if (!t) {
    t = { messages: [], cursor: null, hasMore: false, loaded: false };
    store.threads.set(id, t);
  }
  return t;
}

/** Opens a thread at its newest messages (or, with `older`, loads the page before). */
export async function loadThread(id: string, older = false): Promise<void> {
  const t = thread(id);
  const q = new URLSearchParams({ limit: "50" });
  if (older && t.cursor) q.set("cursor", t.cursor);
  const page = await api<Page<Message>>(
    "GET",
    `/api/v1/conversations/${id}/messages?${q}`,
  );
  const known = new Set(t.messages.map((m) => m.id));
  const fresh = page.data.filter((m) => !known.has(m.id));
  t.messages = older
    ? [...fresh, ...t.messages]
    : mergeMessages(t.messages, page.data);
  if (!older || !t.loaded) {
    t.cursor = page.cursor;
    t.hasMore = page.hasMore;
  } else {
    t.cursor = page.cursor;
    t.hasMore = page.hasMore;
  }
  t.loaded = true;
  if (!conversation(id)) await refreshConversation(id);
  changed();
}

function mergeMessages(current: Message[], incoming: Message[]): Message[] {
  const out = [...current];
  for (const m of incoming) upsertInto(out, m);
  return out;
}

/** Adds or updates a message: status never moves back, failed stays failed. */
function upsertInto(list: Message[], m: Message): void {
  const at = list.findIndex((x) => x.id === m.id);
  if (at < 0) {
    // A send of ours that the server answered meanwhile (matched by clientRef).
    const ref = (m as { clientRef?: string | null }).clientRef;
    const pending = ref
      ? list.findIndex((x) => x.pending && x.id === `local:${ref}`)
      : -1;
    if (pending >= 0) list.splice(pending, 1);
    list.push(m);
    list.sort((a, b) =>
      a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id)
    );
    return;
  }
  const old = list[at]!;
  const status = old.status === "failed" || RANK[old.status] > RANK[m.status]
    ? old.status
    : m.status;
  list[at] = {
    ...old,
    ...m,
    status,
    errorCode: status === "failed" ? m.errorCode ?? old.errorCode : null,
    errorMessage: status === "failed"
      ? m.errorMessage ?? old.errorMessage
      : null,
  };
}

/** A message from an event, in the API's shape (webhook payloads carry text as `{ body }`). */
function normalize(data: Record<string, unknown>): Message {
  const m = { ...data } as unknown as Message & { newStatus?: Status };
  if (m.newStatus) m.status = m.newStatus;
  const content = (m.content ?? {}) as Record<string, unknown>;
  if (m.type === "text" && typeof content.body === "string") {
    m.content = { text: content.body };
  }
  return m;
}

export function upsertMessage(m: Message): void {
  const t = store.threads.get(m.conversationId);
  if (t?.loaded) {
    upsertInto(t.messages, m);
    changed();
  }
}

/** Applies one event of the live stream (or of another tab's). */
export function applyEvent(type: string, data: Record<string, unknown>): void {
  switch (type) {
    case "message.received":
    case "message.created":
    case "message.updated":
    case "message.status_changed": {
      const m = normalize(data);
      upsertMessage(m);
      void refreshConversation(m.conversationId);
      break;
    }
    case "conversation.created":
      void refreshConversation(String(data.id));
      break;
    case "conversation.updated": {
      const c = data as unknown as Conversation;
      opened.set(c.id, c);
      upsertConversation(c);
      break;
    }
    case "conversation.read": {
      const c = conversation(String(data.conversationId));
      if (c) {
        c.unreadCount = 0;
        changed();
      }
      break;
    }
    case "reset":
      // The page was away longer than the feed keeps: read everything again.
      void reloadAll();
      break;
  }
}

export async function reloadAll(): Promise<void> {
  await loadList();
  for (const id of store.threads.keys()) {
    store.threads.delete(id);
    if (store.route.name === "conversation" && store.route.id === id) {
      await loadThread(id);
    }
  }
}

export async function loadAgents(): Promise<void> {
  const { data } = await api<{ data: Agent[] }>("GET", "/api/v1/agents");
  store.agents = data;
  changed();
}

export async function loadTemplates(): Promise<void> {
  const { data } = await api<{ data: Template[] }>(
    "GET",
    "/api/v2/templates?status=approved&pageSize=100",
  );
  store.templates = data;
  changed();
}

export function reportError(err: unknown): void {
  store.error = (err as Error).message ?? String(err);
  changed();
}

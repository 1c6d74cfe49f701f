// The event feed as the panel's stream reads it: every kind (the spec's four
// and the internal ones), after a cursor, narrowed to what the agent sees at
// the moment each event is sent.
import type { Db } from "../../db/schema.ts";
import type { Viewer } from "../conversations/conversation.ts";
import { conversationAssignees } from "../conversations/conversation_repo.ts";
import {
  conversationChangesAfter,
  eventKept,
  lastEventSeq,
  listEventRows,
  newestEventSeq,
} from "./event_repo.ts";
import { decodeFeedCursor, encodeFeedCursor } from "./event_service.ts";

/** Where a stream is in the feed. */
export interface FeedWindow {
  accountId: string;
  afterSeq: number;
  /** The cursor of `afterSeq` (what the next event's `id:` follows). */
  cursor: string;
  /** The cursor given was older than the feed keeps: the page must reload its lists. */
  reset: boolean;
}

/** One event as the stream sends it: `id:` its cursor, `event:` its kind. */
export interface FeedEvent {
  id: string;
  type: string;
  data: unknown;
}

/** Events read per statement. */
const PAGE = 200;

/** The conversation an event is about, for visibility; null when it is about none. */
export function conversationOfEvent(
  type: string,
  data: unknown,
): string | null {
  const d = (data ?? {}) as Record<string, unknown>;
  if (type === "conversation.created" || type === "conversation.updated") {
    return typeof d.id === "string" ? d.id : null;
  }
  return typeof d.conversationId === "string" ? d.conversationId : null;
}

/** The feed reader of the panel's streams. */
export function feedTail(deps: { db: Db }) {
  return {
    /** The newest sequence number of the whole feed: one indexed read. */
    newest: () => newestEventSeq(deps.db),

    /**
     * Where to start: after `cursor`, or after the account's newest event
     * without one. A cursor whose event is no longer kept (pruned, or not
     * this account's) starts at the newest with `reset`; one that is not a
     * cursor is VALIDATION_ERROR.
     */
    async open(accountId: string, cursor?: string): Promise<FeedWindow> {
      const head = async () => await lastEventSeq(deps.db, accountId);
      if (cursor === undefined) {
        const seq = await head();
        return {
          accountId,
          afterSeq: seq,
          cursor: encodeFeedCursor(seq),
          reset: false,
        };
      }
      const seq = decodeFeedCursor(cursor);
      if (seq === 0 || await eventKept(deps.db, accountId, seq)) {
        return { accountId, afterSeq: seq, cursor, reset: false };
      }
      const at = await head();
      return {
        accountId,
        afterSeq: at,
        cursor: encodeFeedCursor(at),
        reset: true,
      };
    },

    /** The next events after the window that the viewer sees, and the window after them. */
    async read(
      viewer: Viewer,
      window: FeedWindow,
    ): Promise<{ events: FeedEvent[]; window: FeedWindow; more: boolean }> {
      const rows = await listEventRows(deps.db, {
        accountId: window.accountId,
        afterSeq: window.afterSeq,
        limit: PAGE,
      });
      const more = rows.length > PAGE;
      const page = more ? rows.slice(0, PAGE) : rows;
      const parsed = page.map((r) => ({
        seq: Number(r.seq),
        type: r.type,
        data: JSON.parse(r.data) as unknown,
      }));
      const visible = await visibleSet(deps, viewer, parsed);
      const last = parsed.at(-1);
      return {
        events: parsed.filter((e) => visible(e)).map((e) => ({
          id: encodeFeedCursor(e.seq),
          type: e.type,
          data: e.data,
        })),
        window: last
          ? {
            ...window,
            afterSeq: last.seq,
            cursor: encodeFeedCursor(last.seq),
            reset: false,
          }
          : window,
        more,
      };
    },
  };
}

/**
 * Which events an `assigned` agent sees: those of conversations assigned to
 * it when the event happened, and a conversation.updated that gave one to
 * it or took one from it (so the page adds or drops it). The assignee at an
 * event is the `previousAssignedTo` of the conversation's next
 * conversation.updated in the feed, or its assignee now when none followed.
 * Contacts on their own are not shown to it.
 */
async function visibleSet(
  deps: { db: Db },
  viewer: Viewer,
  events: { seq: number; type: string; data: unknown }[],
): Promise<(e: { seq: number; type: string; data: unknown }) => boolean> {
  const agent = viewer.onlyAssignedTo;
  if (agent === undefined || events.length === 0) return () => true;
  const ids = new Set<string>();
  for (const e of events) {
    const id = conversationOfEvent(e.type, e.data);
    if (id) ids.add(id);
  }
  const now = await conversationAssignees(deps.db, viewer.accountId, [...ids]);
  // Every assignment change of these conversations after the page's start.
  const changes = (await conversationChangesAfter(
    deps.db,
    viewer.accountId,
    events[0]!.seq - 1,
  )).filter((c) => ids.has(c.id));
  const assigneeAt = (id: string, seq: number): string | null => {
    const next = changes.find((c) => c.id === id && c.seq > seq);
    return next ? next.previousAssignedTo : now.get(id) ?? null;
  };
  return (e) => {
    const id = conversationOfEvent(e.type, e.data);
    if (id === null) return false;
    if (e.type === "conversation.updated") {
      const d = e.data as {
        assignedTo?: unknown;
        previousAssignedTo?: unknown;
      };
      return d.assignedTo === agent || d.previousAssignedTo === agent;
    }
    return assigneeAt(id, e.seq) === agent;
  };
}

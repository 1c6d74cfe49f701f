// GET /panel/events: Server-Sent Events over the event feed (issue 29).
// Each event's `id:` is its feed cursor (the same as GET /events gives), so
// a reconnect with Last-Event-ID (or ?after=) resumes exactly after the last
// event the page saw: nothing lost across sleep, a dropped network or a
// restart, nothing twice. Events are filtered by the agent's visibility when
// they are sent. One timer per process watches the feed's newest sequence
// number while streams are open; it wakes them when it moves.
import type { Context, MiddlewareHandler } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";
import type { Container } from "../../container.ts";
import type { SessionPrincipal } from "../../domain/accounts/agent_session_service.ts";
import { authenticateSession } from "../../domain/accounts/agent_session_service.ts";
import {
  type FeedEvent,
  feedTail,
  type FeedWindow,
} from "../../domain/events/panel_feed_service.ts";
import { viewerOf } from "../../domain/conversations/conversation.ts";
import { AppError } from "../../errors.ts";
import type { OpenStream } from "../../streams.ts";
import type { AppEnv } from "../env.ts";
import { sessionCookie, sessionIdOf } from "../panel_session.ts";

/** How often the feed's newest sequence number is read while streams are open. */
const WATCH_MS = 150;
/** A comment this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 20_000;
/** How often a stream checks that its session still stands (logout elsewhere, revoke). */
const SESSION_CHECK_MS = 2_000;

interface PanelStream extends OpenStream {
  sessionHash: string;
  wake(): void;
}

/**
 * The panel's open event streams in this app: woken when the feed moves,
 * ended by logout; the container's OpenStreams closes them at shutdown.
 */
export class PanelEvents {
  readonly #container: Container;
  readonly #streams = new Set<PanelStream>();
  #timer: ReturnType<typeof setTimeout> | undefined;
  #newest = -1;

  constructor(container: Container) {
    this.#container = container;
  }

  /** Whether new streams are refused (shutdown began). */
  get closing(): boolean {
    return this.#container.streams.closing;
  }

  get size(): number {
    return this.#streams.size;
  }

  add(stream: PanelStream): void {
    this.#streams.add(stream);
    this.#container.streams.add(stream);
    this.#watch();
  }

  delete(stream: PanelStream): void {
    this.#streams.delete(stream);
    if (this.#streams.size === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  /** Ends the streams of a session (logout). */
  closeSession(sessionHash: string): void {
    for (const s of this.#streams) {
      if (s.sessionHash === sessionHash) s.close();
    }
  }

  #watch(): void {
    if (this.#timer !== undefined || this.closing) return;
    const tick = async () => {
      try {
        const newest = await feedTail(this.#container).newest();
        if (newest !== this.#newest) {
          this.#newest = newest;
          for (const s of this.#streams) s.wake();
        }
      } catch (err) {
        this.#container.log.warn("Cannot read the event feed's head", { err });
      }
      this.#timer = this.#streams.size > 0 && !this.closing
        ? setTimeout(tick, WATCH_MS)
        : undefined;
    };
    this.#timer = setTimeout(tick, 0);
  }
}

/** The cursor to resume after: Last-Event-ID (a browser's own reconnect) first, then ?after=. */
function resumeCursor(c: Context<AppEnv>): string | undefined {
  const header = c.req.header("last-event-id")?.trim();
  if (header) return header;
  const after = c.req.query("after")?.trim();
  return after || undefined;
}

/** The route's handler (after the session middleware). */
export function panelEventsRoute(
  container: Container,
  events: PanelEvents,
): MiddlewareHandler<AppEnv> {
  const cookie = sessionCookie(container.config.publicBaseUrl);
  return async (c) => {
    if (events.closing) {
      throw new AppError(
        "SERVICE_UNAVAILABLE",
        "The server is shutting down: reconnect in a moment",
        { retryAfterMs: 1_000 },
      );
    }
    const principal = c.get("principal") as SessionPrincipal;
    const sessionId = sessionIdOf(c, cookie)!;
    const tail = feedTail(container);
    // Read before the stream starts, so a bad cursor is a 400, not a broken stream.
    let window: FeedWindow = await tail.open(
      principal.accountId,
      resumeCursor(c),
    );
    c.header("X-Accel-Buffering", "no");
    return streamSSE(c, async (stream) => {
      let wake: () => void = () => {};
      let woken = true;
      let closed = false;
      let ended!: () => void;
      const open: PanelStream = {
        sessionHash: principal.sessionHash,
        wake: () => {
          woken = true;
          wake();
        },
        close: () => {
          closed = true;
          wake();
        },
        ended: new Promise((resolve) => ended = resolve),
      };
      stream.onAbort(() => open.close());
      events.add(open);
      try {
        if (window.reset) {
          await send(stream, { id: window.cursor, type: "reset", data: {} });
        }
        await stream.writeSSE({
          event: "hello",
          data: JSON.stringify({
            serverTime: container.clock.now().toISOString(),
            cursor: window.cursor,
          }),
          retry: 2_000,
        });
        let checkedAt = Date.now();
        let pingedAt = Date.now();
        while (!closed && !stream.aborted) {
          if (woken) {
            woken = false;
            const page = await tail.read(viewerOf(principal), window);
            window = page.window;
            for (const event of page.events) await send(stream, event);
            if (page.more) woken = true;
          }
          if (Date.now() - checkedAt >= SESSION_CHECK_MS) {
            checkedAt = Date.now();
            if (!await authenticateSession(container, sessionId)) break;
          }
          if (Date.now() - pingedAt >= KEEPALIVE_MS) {
            pingedAt = Date.now();
            await stream.write(": ping\n\n");
          }
          if (woken || closed) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, SESSION_CHECK_MS);
            wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      } finally {
        events.delete(open);
        ended();
      }
    }, (err) => {
      container.log.error("Panel event stream failed", { err });
      return Promise.resolve();
    });
  };
}

async function send(stream: SSEStreamingApi, event: FeedEvent): Promise<void> {
  await stream.writeSSE({
    id: event.id,
    event: event.type,
    data: JSON.stringify(event.data),
  });
}

// One event stream per browser, shared by its tabs: the tab that holds the
// Web Lock "bm-panel-events" opens /panel/events and passes every event to
// the others over a BroadcastChannel; when it closes, another tab takes the
// lock and resumes after the last event it saw. Each tab applies an event
// once, in order, by its feed cursor.

export type Status = "live" | "reconnecting" | "offline";

export interface LiveEvent {
  id: string | undefined;
  type: string;
  data: Record<string, unknown>;
}

/** The kinds the stream sends (the spec's four, the internal ones, reset and hello). */
const KINDS = [
  "hello",
  "reset",
  "message.received",
  "message.status_changed",
  "conversation.created",
  "contact.created",
  "message.created",
  "message.updated",
  "conversation.updated",
  "conversation.read",
];

function seqOf(cursor: string): number {
  try {
    return Number(atob(cursor).split(":")[1]) || 0;
  } catch {
    return 0;
  }
}

type Message =
  | { kind: "event"; event: LiveEvent }
  | { kind: "status"; status: Status }
  | { kind: "ask" };

export function startLive(options: {
  agentId: string;
  cursor: string;
  onEvent(event: LiveEvent): void;
  onStatus(status: Status): void;
}): void {
  let cursor = options.cursor;
  let status: Status = "reconnecting";
  const channel = typeof BroadcastChannel === "function"
    ? new BroadcastChannel(`bm-panel:${options.agentId}`)
    : undefined;
  let leading = false;

  const setStatus = (s: Status) => {
    status = navigator.onLine === false ? "offline" : s;
    options.onStatus(status);
    if (leading) channel?.postMessage({ kind: "status", status } as Message);
  };

  /** Applies an event once: ids are increasing feed cursors. */
  const accept = (event: LiveEvent) => {
    if (event.id !== undefined) {
      if (seqOf(event.id) <= seqOf(cursor)) return;
      cursor = event.id;
    }
    options.onEvent(event);
  };

  channel?.addEventListener("message", (e: MessageEvent<Message>) => {
    const m = e.data;
    if (m.kind === "event" && !leading) accept(m.event);
    else if (m.kind === "status" && !leading) {
      status = m.status;
      options.onStatus(status);
    } else if (m.kind === "ask" && leading) {
      channel.postMessage({ kind: "status", status } as Message);
    }
  });

  const lead = () => {
    leading = true;
    let source: EventSource | undefined;
    let backoff = 500;
    const connect = () => {
      source = new EventSource(
        `/panel/events?after=${encodeURIComponent(cursor)}`,
      );
      source.onopen = () => {
        backoff = 500;
      };
      for (const kind of KINDS) {
        source.addEventListener(kind, (e) => {
          const me = e as MessageEvent<string>;
          const event: LiveEvent = {
            id: me.lastEventId && kind !== "hello" ? me.lastEventId : undefined,
            type: kind,
            data: me.data ? JSON.parse(me.data) : {},
          };
          if (kind === "hello") setStatus("live");
          if (event.id !== undefined && seqOf(event.id) <= seqOf(cursor)) {
            return;
          }
          accept(event);
          channel?.postMessage({ kind: "event", event } as Message);
        });
      }
      source.onerror = () => {
        setStatus("reconnecting");
        if (source?.readyState === EventSource.CLOSED) {
          // The browser gave up (a 5xx, a restart): a new one resumes by ?after=.
          setTimeout(connect, backoff);
          backoff = Math.min(backoff * 2, 15_000);
        }
      };
    };
    connect();
    addEventListener(
      "online",
      () => setStatus(status === "offline" ? "reconnecting" : status),
    );
    addEventListener("offline", () => setStatus("offline"));
    // Held while this tab lives: the next tab takes over when it closes.
    return new Promise<void>(() => {});
  };

  if (navigator.locks && channel) {
    void navigator.locks.request("bm-panel-events", lead);
    channel.postMessage({ kind: "ask" } as Message);
  } else {
    void lead();
  }
}

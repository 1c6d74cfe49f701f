// Reads a Server-Sent Events response the way a browser's EventSource does
// (the fields the panel's stream uses), and signs agents in for tests.
import type { Harness } from "../_harness.ts";
import {
  createLoginLink,
  signIn,
} from "../../src/domain/accounts/agent_session_service.ts";
import { waitFor } from "../_support/wait.ts";

export interface SseEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** A parsed event stream: what arrived so far, and a way to wait for more. */
export class SseReader {
  readonly events: SseEvent[] = [];
  readonly done: Promise<void>;
  #buffer = "";
  #reader: ReadableStreamDefaultReader<string>;

  constructor(body: ReadableStream<Uint8Array>) {
    this.#reader = body.pipeThrough(new TextDecoderStream()).getReader();
    this.done = this.#pump();
  }

  async #pump(): Promise<void> {
    try {
      for (;;) {
        const { done, value } = await this.#reader.read();
        if (done) return;
        this.#buffer += value;
        let end: number;
        while ((end = this.#buffer.indexOf("\n\n")) >= 0) {
          const block = this.#buffer.slice(0, end);
          this.#buffer = this.#buffer.slice(end + 2);
          const event: SseEvent = { id: undefined, event: "message", data: "" };
          let data: string[] | undefined;
          for (const line of block.split("\n")) {
            if (line.startsWith(":")) continue;
            const at = line.indexOf(":");
            const field = at < 0 ? line : line.slice(0, at);
            const value = at < 0 ? "" : line.slice(at + 1).replace(/^ /, "");
            if (field === "id") event.id = value;
            else if (field === "event") event.event = value;
            else if (field === "data") (data ??= []).push(value);
          }
          if (data === undefined) continue;
          event.data = data.join("\n");
          this.events.push(event);
        }
      }
    } catch {
      // The stream was cancelled or broke: done.
    }
  }

  /** The events of these kinds (without hello and reset). */
  of(...types: string[]): SseEvent[] {
    return this.events.filter((e) => types.includes(e.event));
  }

  /** Waits until `predicate` holds over what arrived. */
  async until(
    predicate: (events: SseEvent[]) => boolean,
    what: string,
  ): Promise<void> {
    await waitFor(() => predicate(this.events), { timeoutMs: 10_000, what });
  }

  async cancel(): Promise<void> {
    await this.#reader.cancel().catch(() => {});
    await this.done;
  }
}

/** A session cookie for an agent, signed in through a fresh login link. */
export async function sessionCookie(
  h: Harness,
  agent: { id: string; accountId: string },
): Promise<string> {
  const { token } = await createLoginLink(h.container, agent);
  const started = await signIn(h.container, token);
  if (!started) throw new Error("Cannot sign in");
  return `bm_session=${started.sessionId}`;
}

/** Opens /panel/events on the harness app (in-process). */
export async function openEvents(
  h: Harness,
  cookie: string,
  options: { after?: string; lastEventId?: string } = {},
): Promise<{ status: number; headers: Headers; reader: SseReader }> {
  const query = options.after ? `?after=${options.after}` : "";
  const headers = new Headers({ cookie });
  if (options.lastEventId) headers.set("last-event-id", options.lastEventId);
  const res = await h.app.fetch(
    new Request(`http://localhost/panel/events${query}`, { headers }),
  );
  if (!res.body || res.status !== 200) {
    throw new Error(`GET /panel/events: ${res.status} ${await res.text()}`);
  }
  return {
    status: res.status,
    headers: res.headers,
    reader: new SseReader(res.body),
  };
}

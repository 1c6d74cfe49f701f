// deno-lint-ignore-file no-console
/**
 * A strict stand-in for Meta's Graph API, for the scale-out harness
 * (bench/scaleout.ts): the upstream simulator (src/simulator) behind
 * a front that enforces the per-number send rate with a strict sliding one
 * second window and records every send.
 *
 * - Each instance under test gets its own META_GRAPH_URL,
 *   `http://127.0.0.1:PORT/i/<instance>/v22.0`, so every request names the
 *   instance that made it.
 * - POST /{phone-number-id}/messages: at most `rate` accepted sends per number
 *   in any window (t - 1 s, t], t being when the request arrived (the slot is
 *   taken before the body is read, so arrival order decides); beyond that the
 *   answer is Meta's 130429 (subcode 2494055) and nothing is sent. A send that
 *   the simulator refuses (a bad body) gives its slot back.
 * - Everything else (validation, the answer's shape, the wamid, status
 *   callbacks) is the simulator's: it runs in this process with its own
 *   throughput check lifted. Status callbacks go to `callbackUrl` only when
 *   `statuses` > 0 (1 = sent, 2 = + delivered, 3 = + read).
 * - GET /_strict/log?from=N returns the records from the N-th on; POST
 *   /_strict/reset {rate, statuses, callbackUrl} starts a new phase.
 *
 * Run as a process: `deno run -A bench/_strict_upstream.ts --port P
 * --app-secret S`; it prints one JSON line with its URL when it listens.
 */
import { parseArgs } from "node:util";
import { createSimulatorApp } from "../src/simulator/app.ts";
import { graphErrorResponse } from "../src/simulator/sim_errors.ts";
import {
  createSimulatorState,
  resetSimulator,
  type SimulatorState,
  type StatusName,
} from "../src/simulator/state.ts";

/** One request to POST /{phone-number-id}/messages, as the upstream saw it. */
export interface SendRecord {
  /** Arrival (ms since the epoch, sub-ms: performance.timeOrigin + now()). */
  t: number;
  /** When the answer was handed back (same clock). */
  done: number;
  phoneNumberId: string;
  /** The instance named in the URL ("-" without one). */
  instance: string;
  /** biz_opaque_callback_data: the server's message id. */
  messageId: string | null;
  /** 1 for the first request carrying this messageId, 2 for the next... */
  attempt: number;
  outcome: "accepted" | "throttled" | "rejected";
  /** The wamid of an accepted send. */
  wamid: string | null;
  /** The Graph error code of a refused one. */
  code: number | null;
}

export interface StrictSettings {
  /** Accepted sends per number in any 1 s window. */
  rate: number;
  /** Status callbacks per accepted send: 0 none, 1 sent, 2 delivered, 3 read. */
  statuses: number;
  callbackUrl: string | null;
}

/** Sub-millisecond wall time, comparable between processes on one machine. */
export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

const WINDOW_MS = 1_000;
const MESSAGES_PATH = /^(?:\/v\d+\.\d+)?\/([^/]+)\/messages$/;
const INSTANCE_PATH = /^\/i\/([^/]+)(\/.*)$/;
const LAST_STATUS: StatusName[] = ["sent", "delivered", "read"];

/** The strict front over a simulator; `handle` is a Deno.serve handler. */
export class StrictUpstream {
  readonly records: SendRecord[] = [];
  #settings: StrictSettings;
  #state: SimulatorState;
  #sim: ReturnType<typeof createSimulatorApp>;
  /** Accepted (or reserved) arrival times per number, ascending, within the last window. */
  #windows = new Map<string, number[]>();
  #attempts = new Map<string, number>();

  #now: () => number;

  /** `now` is the clock of arrivals (tests pass their own). */
  constructor(
    appSecret: string,
    settings: StrictSettings,
    now: () => number = nowMs,
  ) {
    this.#now = now;
    this.#settings = settings;
    this.#state = createSimulatorState({
      appSecret,
      // The window here decides; the simulator's own bucket never refuses.
      throughputPerSecond: 1e9,
    });
    this.#apply(settings);
    this.#sim = createSimulatorApp(this.#state);
  }

  /** Forgets every record and window and applies new settings. */
  reset(settings: StrictSettings): void {
    resetSimulator(this.#state);
    this.records.length = 0;
    this.#windows.clear();
    this.#attempts.clear();
    this.#settings = settings;
    this.#apply(settings);
  }

  #apply(settings: StrictSettings): void {
    const state = this.#state;
    state.behaviour.throughputPerSecond = 1e9;
    state.callbackUrl = settings.statuses > 0 ? settings.callbackUrl : null;
    // Without callbacks, "queued" mode parks them unsent instead of running timers.
    state.callbackMode = settings.statuses > 0 ? "timers" : "queued";
    state.behaviour.stopAfter =
      LAST_STATUS[Math.min(3, Math.max(1, settings.statuses)) - 1]!;
  }

  handle = async (req: Request): Promise<Response> => {
    const t = this.#now();
    const url = new URL(req.url);
    if (url.pathname.startsWith("/_strict/")) {
      return await this.#control(req, url);
    }
    const routed = INSTANCE_PATH.exec(url.pathname);
    const instance = routed?.[1] ?? "-";
    const path = routed?.[2] ?? url.pathname;
    const send = req.method === "POST" ? MESSAGES_PATH.exec(path) : null;
    const forward = (body?: string) =>
      this.#sim.fetch(
        new Request(`http://sim${path}${url.search}`, {
          method: req.method,
          headers: req.headers,
          body,
        }),
      );
    if (!send) {
      return await forward(
        req.method === "GET" || req.method === "HEAD"
          ? undefined
          : await req.text(),
      );
    }
    const phoneNumberId = decodeURIComponent(send[1]!);
    // Decided on arrival, before any await: arrival order is window order.
    const admitted = this.#take(phoneNumberId, t);
    const text = await req.text();
    const parsed = parseBody(text);
    const messageId = parsed?.messageId ?? null;
    if (parsed?.isRead) {
      if (admitted) this.#giveBack(phoneNumberId, t);
      return await forward(text);
    }
    const attempt = this.#attempt(messageId);
    const record: SendRecord = {
      t,
      done: 0,
      phoneNumberId,
      instance,
      messageId,
      attempt,
      outcome: "throttled",
      wamid: null,
      code: 130429,
    };
    this.records.push(record);
    let res: Response;
    if (!admitted) {
      res = graphErrorResponse(130429, { subcode: 2494055 });
    } else {
      res = await forward(text);
      const body = await res.clone().json().catch(() => undefined);
      if (res.ok) {
        record.outcome = "accepted";
        record.code = null;
        record.wamid = body?.messages?.[0]?.id ?? null;
      } else {
        this.#giveBack(phoneNumberId, t);
        record.outcome = "rejected";
        record.code = body?.error?.code ?? null;
      }
    }
    record.done = this.#now();
    return res;
  };

  /** Takes a slot in the number's window at `t`, or false when the window is full. */
  #take(phoneNumberId: string, t: number): boolean {
    let window = this.#windows.get(phoneNumberId);
    if (!window) this.#windows.set(phoneNumberId, window = []);
    let drop = 0;
    while (drop < window.length && window[drop]! <= t - WINDOW_MS) drop++;
    if (drop) window.splice(0, drop);
    if (window.length >= this.#settings.rate) return false;
    window.push(t);
    return true;
  }

  #giveBack(phoneNumberId: string, t: number): void {
    const window = this.#windows.get(phoneNumberId);
    const at = window?.lastIndexOf(t) ?? -1;
    if (at >= 0) window!.splice(at, 1);
  }

  #attempt(messageId: string | null): number {
    if (messageId === null) return 1;
    const n = (this.#attempts.get(messageId) ?? 0) + 1;
    this.#attempts.set(messageId, n);
    return n;
  }

  async #control(req: Request, url: URL): Promise<Response> {
    if (url.pathname === "/_strict/log" && req.method === "GET") {
      const from = Number(url.searchParams.get("from") ?? 0);
      return Response.json({ records: this.records.slice(from) });
    }
    if (url.pathname === "/_strict/reset" && req.method === "POST") {
      const body = await req.json();
      this.reset({
        rate: Number(body.rate ?? this.#settings.rate),
        statuses: Number(body.statuses ?? 0),
        callbackUrl: body.callbackUrl ?? null,
      });
      return Response.json({ ok: true });
    }
    if (url.pathname === "/_strict/health") return Response.json({ ok: true });
    return new Response("Not found", { status: 404 });
  }
}

/** The message id (biz_opaque_callback_data) of a send body, and whether it is a read receipt instead. */
function parseBody(
  text: string,
): { messageId: string | null; isRead: boolean } | undefined {
  try {
    const body = JSON.parse(text);
    if (typeof body !== "object" || body === null) return undefined;
    return {
      messageId: typeof body.biz_opaque_callback_data === "string"
        ? body.biz_opaque_callback_data
        : null,
      isRead: body.status !== undefined,
    };
  } catch {
    return undefined;
  }
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      port: { type: "string", default: "0" },
      "app-secret": { type: "string" },
      rate: { type: "string", default: "80" },
    },
  });
  const upstream = new StrictUpstream(values["app-secret"] ?? "", {
    rate: Number(values.rate),
    statuses: 0,
    callbackUrl: null,
  });
  const server = Deno.serve({
    port: Number(values.port),
    hostname: "127.0.0.1",
    onListen: ({ port }) =>
      console.log(JSON.stringify({ url: `http://127.0.0.1:${port}` })),
  }, upstream.handle);
  const stop = () => server.shutdown().then(() => Deno.exit(0));
  Deno.addSignalListener("SIGTERM", stop);
  Deno.addSignalListener("SIGINT", stop);
}

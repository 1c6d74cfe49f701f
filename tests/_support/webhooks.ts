// Webhook test support: a recording receiver on loopback (a real HTTP
// server), and a harness whose webhook worker pool the test drives with
// runOnce() under a manual clock.
import {
  createHarness,
  type Harness,
  type HarnessOptions,
} from "../_harness.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";
import { createJobHandlers, splitHandlers } from "../../src/jobs/registry.ts";
import { createLogger } from "../../src/log.ts";
import type { ManualClock } from "../../src/clock.ts";
import {
  inboundEnvelope,
  postWebhook,
  signedBody,
} from "../messaging/_helpers.ts";

// deno-lint-ignore no-explicit-any
export type Json = any;

export interface Received {
  method: string;
  path: string;
  headers: Headers;
  /** The body exactly as received. */
  raw: string;
  json: Json;
  /** Date.now() when the body was read. */
  at: number;
}

export type Answer = (req: Received, n: number) => Response | Promise<Response>;

export interface Receiver {
  /** http://127.0.0.1:PORT/hook */
  url: string;
  port: number;
  received: Received[];
  /** Answers from now on (default: 200 "ok"). */
  answer(fn: Answer): void;
  stop(): Promise<void>;
}

/** A Deno.serve receiver that records every request and answers with `answer`. */
export function startReceiver(answer?: Answer): Receiver {
  const received: Received[] = [];
  let current: Answer = answer ?? (() => new Response("ok"));
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const raw = await req.text();
      let json: Json = undefined;
      try {
        json = JSON.parse(raw);
      } catch { /* not JSON */ }
      const entry: Received = {
        method: req.method,
        path: new URL(req.url).pathname,
        headers: req.headers,
        raw,
        json,
        at: Date.now(),
      };
      received.push(entry);
      return await current(entry, received.length);
    },
  );
  const port = server.addr.port;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    port,
    received,
    answer(fn) {
      current = fn;
    },
    stop: () => server.shutdown(),
  };
}

export interface WebhookHarness extends Harness {
  clock: ManualClock;
  pool: WorkerPool;
  /** Runs every due webhook attempt (and their follow-ups due now). */
  deliver(): Promise<number>;
  /** Runs every due job of the other kinds (inbound processing, sends). */
  processJobs(): Promise<number>;
  /** POST /api/v2/webhooks; returns the created subscription with its secret. */
  subscribe(body: Record<string, unknown>): Promise<Json>;
}

/** A harness (manual clock) with a webhook pool that only runs when told. */
export async function createWebhookHarness(
  options: HarnessOptions = {},
): Promise<WebhookHarness> {
  const h = await createHarness(options);
  const handlers = splitHandlers(createJobHandlers(h.container));
  const main = new WorkerPool({
    db: h.container.db,
    clock: h.container.clock,
    log: createLogger("silent"),
    handlers: handlers.main,
    concurrency: 4,
  });
  const pool = new WorkerPool({
    db: h.container.db,
    clock: h.container.clock,
    log: createLogger("silent"),
    handlers: handlers.webhooks,
    concurrency: 16,
    reserveUrgentSlot: false,
    maxPerGroup: 8,
    leaseMs: 15_000,
  });
  return {
    ...h,
    clock: h.clock as ManualClock,
    pool,
    deliver: () => pool.runOnce(),
    processJobs: () => main.runOnce(),
    async subscribe(body) {
      const res = await h.request("POST", "/api/v2/webhooks", { body });
      if (res.status !== 201) {
        throw new Error(
          `POST /webhooks answered ${res.status}: ${JSON.stringify(res.body)}`,
        );
      }
      return res.body.data;
    },
    async [Symbol.asyncDispose]() {
      await pool.drain(1_000);
      await h[Symbol.asyncDispose]();
    },
  };
}

/** Registers a test on its own webhook harness and receiver (sanitizers off: sockets linger). */
export function webhookTest(
  name: string,
  fn: (h: WebhookHarness, receiver: Receiver) => Promise<void>,
  options: HarnessOptions = {},
): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      const receiver = startReceiver();
      try {
        await using h = await createWebhookHarness(options);
        await fn(h, receiver);
      } finally {
        await receiver.stop();
      }
    },
  });
}

/** Creates a contact through the API (one contact.created event). */
export async function createContact(h: Harness, phone: string): Promise<Json> {
  const res = await h.request("POST", "/api/v2/contacts", {
    body: { phoneNumber: phone, name: "Ana" },
  });
  if (res.status !== 201) {
    throw new Error(`POST /contacts answered ${res.status}`);
  }
  return res.body.data;
}

let phoneCounter = 0;

/** A fresh valid Argentine mobile number. */
export function nextPhone(): string {
  return `+5491166${String(++phoneCounter).padStart(6, "0")}`;
}

/** A customer's message, through the signed Meta webhook and its processing job. */
export async function customerWrites(
  h: WebhookHarness,
  from: string,
  text: string,
): Promise<void> {
  const payload = inboundEnvelope(h, {
    id: `wamid.${crypto.randomUUID()}`,
    type: "text",
    text: { body: text },
  }, from);
  const { raw, signature } = await signedBody(payload);
  const res = await postWebhook(h, raw, signature);
  if (res.status !== 200) {
    throw new Error(`POST /meta/webhook answered ${res.status}`);
  }
  if (await h.processJobs() < 1) throw new Error("no inbound job ran");
}

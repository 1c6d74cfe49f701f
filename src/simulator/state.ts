import { createLogger, type Logger } from "../log.ts";

export type StatusName = "sent" | "delivered" | "read";

export interface StatusDelays {
  sent: number;
  delivered: number;
  read: number;
}

/** One injected failure: the next `count` sends (optionally only to `to`) fail with `code`. */
export interface FailRule {
  code: number;
  /** sync = HTTP error on the send; async = 200 + wamid, then a `failed` status callback. */
  mode: "sync" | "async";
  count: number;
  to?: string;
}

/** What the fake upstream does; changed at run time through POST /_sim/behaviour. */
export interface Behaviour {
  /** Offsets from the send at which each status callback is emitted. */
  delaysMs: StatusDelays;
  /** Share of status callbacks that are sent twice. */
  duplicateRate: number;
  /** Share of messages whose `read` arrives before `delivered`. */
  reorderRate: number;
  failNext: FailRule[];
  throughputPerSecond: number;
  /** The last status emitted for a successful send. */
  stopAfter: StatusName;
  /** Template names that fail with a sync 132001. */
  unknownTemplates: string[];
  /** Delay before answering a send. */
  latencyMs: number;
}

export interface SentRecord {
  wamid: string;
  phoneNumberId: string;
  /** The phone number, or the BSUID of a send by `recipient`. */
  to: string;
  type: string;
  body: Record<string, unknown>;
  bizOpaque: string | null;
  at: string;
}

export interface ReadRecord {
  phoneNumberId: string;
  messageId: string;
  typing: boolean;
  at: string;
}

export interface CallbackRecord {
  kind: "status" | "inbound" | "management";
  wamid: string;
  status: string | null;
  attempt: number;
  duplicate: boolean;
  url: string | null;
  httpStatus: number | null;
  error: string | null;
  at: string;
}

export interface StoredMedia {
  id: string;
  bytes: Uint8Array;
  mimeType: string;
  sha256: string;
  /** Required in the download URL, so only URLs from GET /{media-id} work. */
  token: string;
}

export interface RegisteredNumber {
  phoneNumberId: string;
  /** Digits only, as in webhook metadata.display_phone_number. */
  displayPhoneNumber: string;
  wabaId: string;
}

export interface SimulatorState {
  /** Base URL of the running simulator (used in media URLs). */
  url: string;
  appSecret: string;
  callbackUrl: string | null;
  log: Logger;
  random: () => number;
  /** Waits between attempts of a failed callback POST. */
  retryDelaysMs: number[];
  initial: Behaviour;
  behaviour: Behaviour;
  sends: SentRecord[];
  reads: ReadRecord[];
  callbacks: CallbackRecord[];
  countsByOpaque: Map<string, number>;
  /** Sends refused with 130429 (throughput), per business number. */
  throttled: Map<string, number>;
  numbers: Map<string, RegisteredNumber>;
  media: Map<string, StoredMedia>;
  buckets: Map<string, { tokens: number; at: number }>;
  nextMediaId: number;
  /** Aborted by reset and stop: pending callbacks of the old epoch are dropped. */
  epoch: AbortController;
  tasks: Set<Promise<unknown>>;
  /**
   * "timers": status callbacks go out on their own after their delays (dev, e2e);
   * "queued": they wait in `queued` until the owner calls flushCallbacks() (tests).
   */
  callbackMode: CallbackMode;
  queued: QueuedCallback[];
  nextQueuedSeq: number;
}

export type CallbackMode = "timers" | "queued";

/** One callback attempt waiting for flushCallbacks(); flushed in (dueAt, seq) order. */
export interface QueuedCallback {
  /** When it would have been posted in timer mode (ms since epoch). */
  dueAt: number;
  seq: number;
  run: () => Promise<void>;
}

export interface SimulatorStateOptions {
  appSecret: string;
  url?: string;
  callbackUrl?: string;
  throughputPerSecond?: number;
  statusDelaysMs?: StatusDelays;
  retryDelaysMs?: number[];
  log?: Logger;
  random?: () => number;
  /** @default "timers" */
  callbackMode?: CallbackMode;
}

export const DEFAULT_WABA_ID = "102290129340398";
const MAX_CALLBACK_RECORDS = 2000;

function defaultBehaviour(opts: SimulatorStateOptions): Behaviour {
  return {
    delaysMs: opts.statusDelaysMs ?? { sent: 50, delivered: 150, read: 300 },
    duplicateRate: 0,
    reorderRate: 0,
    failNext: [],
    throughputPerSecond: opts.throughputPerSecond ?? 80,
    stopAfter: "read",
    unknownTemplates: [],
    latencyMs: 0,
  };
}

/** Fresh simulator state; nothing runs until the app serves requests. */
export function createSimulatorState(
  opts: SimulatorStateOptions,
): SimulatorState {
  const initial = defaultBehaviour(opts);
  return {
    url: opts.url ?? "http://127.0.0.1",
    appSecret: opts.appSecret,
    callbackUrl: opts.callbackUrl ?? null,
    log: opts.log ?? createLogger("silent"),
    random: opts.random ?? Math.random,
    retryDelaysMs: opts.retryDelaysMs ?? [200, 1_000, 3_000, 10_000],
    initial,
    behaviour: structuredClone(initial),
    sends: [],
    reads: [],
    callbacks: [],
    countsByOpaque: new Map(),
    throttled: new Map(),
    numbers: new Map(),
    media: new Map(),
    buckets: new Map(),
    nextMediaId: 1_000_000_000_000_000 + Math.floor(Math.random() * 1e9),
    epoch: new AbortController(),
    tasks: new Set(),
    callbackMode: opts.callbackMode ?? "timers",
    queued: [],
    nextQueuedSeq: 0,
  };
}

/** Clears records and behaviour and drops pending callbacks; keeps numbers and media. */
export function resetSimulator(state: SimulatorState): void {
  state.epoch.abort();
  state.epoch = new AbortController();
  state.queued = [];
  state.behaviour = structuredClone(state.initial);
  state.sends = [];
  state.reads = [];
  state.callbacks = [];
  state.countsByOpaque.clear();
  state.throttled.clear();
  state.buckets.clear();
}

/** Drops pending callbacks for good and waits for background tasks to settle. */
export async function settleSimulator(state: SimulatorState): Promise<void> {
  state.epoch.abort();
  state.queued = [];
  await Promise.allSettled([...state.tasks]);
}

/** Keeps a background task visible to stop(), which waits for it. */
export function track(state: SimulatorState, task: Promise<unknown>): void {
  const settled = task.catch((err) =>
    state.log.error("Simulator task failed", { err })
  ).finally(() => state.tasks.delete(settled));
  state.tasks.add(settled);
}

export function recordCallback(
  state: SimulatorState,
  record: CallbackRecord,
): void {
  state.callbacks.push(record);
  if (state.callbacks.length > MAX_CALLBACK_RECORDS) state.callbacks.shift();
}

/** Resolves after ms, or rejects as soon as the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(signal.reason);
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** A business-scoped user id such as `US.13491208655302741918` (§4.7). */
export function isUserId(text: string): boolean {
  return /^[A-Z]{2}\.(?:ENT\.)?[A-Za-z0-9]{1,128}$/.test(text);
}

export function digitsOf(phone: string): string {
  return phone.replace(/\D/g, "");
}

/** A fresh wamid: "wamid." + 30 random bytes in base64url (240 bits, so unique in practice). */
export function newWamid(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(30));
  let text = "";
  for (const b of bytes) text += String.fromCharCode(b);
  return "wamid." +
    btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

/** Unix seconds as a string, the webhook timestamp format. */
export function unixSeconds(ms: number = Date.now()): string {
  return String(Math.floor(ms / 1000));
}

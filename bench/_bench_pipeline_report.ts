// deno-lint-ignore-file no-console
/**
 * What pipeline.ts measures, and how it prints it. Every figure comes
 * from what the simulator recorded (sends, their times, 130429 refusals), what
 * the webhook receiver recorded, or /proc; none from the server's own claims.
 */
import { idTime } from "../src/ids.ts";
import { ms, summary } from "./_bench_load.ts";
import type { Delivery } from "./_bench_receiver.ts";
import type { ServeBench } from "./_bench_serve.ts";

const LIMIT = 80;

/** The issue 7 targets the last block of the report checks. */
const TARGET = { share: 0.98, liveP99Ms: 250, cpuMsPerMessage: 1 };

export interface Channel {
  id: string;
  upstreamId: string;
  phone: string;
}

export interface LiveSend {
  id: string | null;
  ch: number;
  /** Client clock right before the POST. */
  acceptAt: number;
  httpMs: number;
  phase: "enqueue" | "drain";
  status: number;
}

/** What the receiver saw, per subscription. */
export interface Hooks {
  /** Subscription ids, in creation order. */
  subscriptions: string[];
  /** The status whose message.status_changed ends a message's story (--statuses). */
  finalStatus: string;
  /** webhookId -> event type -> first deliveries. */
  counts: Map<string, Map<string, number>>;
  /** webhookId -> deliveries of an eventId it had already received. */
  duplicates: Map<string, number>;
  /** `${webhookId} ${eventId}` of every delivery received. */
  seen: Set<string>;
  /** Receipt time minus the event id's UUIDv7 time (taken when the event row is written). */
  lags: number[];
  /** The lags of message.status_changed deliveries, by the message they are about. */
  statusLags: { messageId: string; lag: number }[];
  /** message.received deliveries: the customer's phone and the receipt time. */
  received: { phone: string; at: number }[];
  /** message id -> subscriptions its final status event reached. */
  finals: Map<string, number>;
  /** eventId -> subscriptions it reached: fewer than all is a delivery still owed (or lost). */
  reached: Map<string, number>;
}

/** CPU ms (utime + stime) of each process at a moment of the run. */
export interface CpuMark {
  at: number;
  server: number;
  sim: number;
  /** This process: the client, the simulator poller and the webhook receiver. */
  self: number;
}

export interface Run {
  server: Pick<ServeBench, "baseUrl" | "apiKey" | "simulatorUrl">;
  channels: Channel[];
  started: number;
  capAt: number;
  enqueueing: boolean;
  enqueueDoneAt: number | null;
  enqueueErrors: number;
  batchIds: Set<string>;
  batchChannel: Map<string, number>;
  live: LiveSend[];
  /** Every send the simulator recorded, in order. */
  samples: { opaque: string | null; upstreamId: string; at: number }[];
  /** bizOpaque (our message id) -> first time the simulator accepted it. */
  firstAt: Map<string, number>;
  offset: number;
  hooks: Hooks;
  /** Customers who wrote during the run: phone -> when the client asked the simulator to send it. */
  inbound: Map<string, number>;
  /** At the start, when the last batch message reached the simulator, when every event was delivered. */
  cpu: { start?: CpuMark; sent?: CpuMark; end?: CpuMark };
}

/** Empty records; push each subscription's id once it is created. */
export function newHooks(finalStatus: string): Hooks {
  return {
    subscriptions: [],
    finalStatus,
    counts: new Map(),
    duplicates: new Map(),
    seen: new Set(),
    lags: [],
    statusLags: [],
    received: [],
    finals: new Map(),
    reached: new Map(),
  };
}

/** Counts one delivery: a repeat of (subscription, eventId) is a duplicate and counts nowhere else. */
export function recordDelivery(hooks: Hooks, d: Delivery): void {
  const key = `${d.webhookId} ${d.eventId}`;
  if (hooks.seen.has(key)) {
    hooks.duplicates.set(
      d.webhookId,
      (hooks.duplicates.get(d.webhookId) ?? 0) + 1,
    );
    return;
  }
  hooks.seen.add(key);
  const byEvent = hooks.counts.get(d.webhookId) ?? new Map<string, number>();
  hooks.counts.set(d.webhookId, byEvent);
  byEvent.set(d.event, (byEvent.get(d.event) ?? 0) + 1);
  const lag = d.at - idTime(d.eventId).getTime();
  hooks.lags.push(lag);
  if (d.event === "message.status_changed" && d.data?.id) {
    hooks.statusLags.push({ messageId: d.data.id, lag });
  }
  if (d.event === "message.received" && d.data?.contact?.phoneNumber) {
    hooks.received.push({ phone: d.data.contact.phoneNumber, at: d.at });
  }
  hooks.reached.set(d.eventId, (hooks.reached.get(d.eventId) ?? 0) + 1);
  if (
    d.event === "message.status_changed" &&
    d.data?.newStatus === hooks.finalStatus
  ) {
    hooks.finals.set(d.data.id, (hooks.finals.get(d.data.id) ?? 0) + 1);
  }
}

/** Messages (batch and live) whose final status event has not reached every subscription yet. */
export function eventsOutstanding(run: Run): number {
  const want = run.hooks.subscriptions.length;
  if (want === 0) return 0;
  let n = 0;
  const ids = [...run.batchIds, ...run.live.map((l) => l.id)];
  for (const id of ids) if (id && (run.hooks.finals.get(id) ?? 0) < want) n++;
  return n;
}

/**
 * Events that reached some subscription but not every one: each subscription
 * takes every event kind, so each is a delivery still owed (a parked or
 * retried attempt) or, once the grace is over, lost.
 */
export function eventsPartial(hooks: Hooks): number {
  const want = hooks.subscriptions.length;
  let n = 0;
  for (const reached of hooks.reached.values()) if (reached < want) n++;
  return n;
}

/** Batch messages the simulator has received so far. */
export function arrivedBatch(run: Run): number {
  let n = 0;
  for (const id of run.batchIds) if (run.firstAt.has(id)) n++;
  return n;
}

const liveLatency = (run: Run, l: LiveSend): number | null =>
  l.id && run.firstAt.has(l.id) ? run.firstAt.get(l.id)! - l.acceptAt : null;

function pad(values: (string | number)[], widths: number[]): string {
  return "  " +
    values.map((v, i) => String(v).padStart(widths[i]!)).join(" ");
}

export interface ChannelFigures {
  /** Batch messages per second at the upstream: (sent - 1) / (last - first). */
  rate: number;
  throttled: number;
  duplicates: number;
}

/** The per-number table; returns its figures for the targets block. */
export function reportChannels(
  run: Run,
  throttled: Record<string, number>,
): ChannelFigures[] {
  const byUpstream = new Map(run.channels.map((c, i) => [c.upstreamId, i]));
  const times = run.channels.map(() => [] as number[]);
  const counts = new Map<string, number>();
  for (const s of run.samples) {
    if (!s.opaque) continue;
    counts.set(s.opaque, (counts.get(s.opaque) ?? 0) + 1);
    const ch = byUpstream.get(s.upstreamId);
    if (ch !== undefined && run.batchIds.has(s.opaque)) times[ch]!.push(s.at);
  }
  const sentTo = new Map<string, number>();
  for (const l of run.live) if (l.id) sentTo.set(l.id, l.ch);
  for (const [id, ch] of run.batchChannel) sentTo.set(id, ch);
  const widths = [13, 6, 7, 7, 6, 7, 5, 6, 8, 8, 8];
  console.log(pad([
    "number",
    "sent",
    "span s",
    "msg/s",
    "of 80",
    "130429",
    "dups",
    "live",
    "p50 ms",
    "p99 ms",
    "max ms",
  ], widths));
  return run.channels.map((ch, i) => {
    const t = times[i]!;
    // Loops, not Math.max(...t): a long run's times would overflow the stack.
    const span = t.length > 1
      ? (t.reduce((a, b) => (b > a ? b : a)) -
        t.reduce((a, b) => (b < a ? b : a))) / 1000
      : NaN;
    const rate = (t.length - 1) / span;
    let dups = 0;
    for (const [id, c] of sentTo) {
      if (c === i && (counts.get(id) ?? 0) > 1) dups++;
    }
    const lats = run.live.filter((l) => l.ch === i)
      .map((l) => liveLatency(run, l)).filter((v): v is number => v !== null);
    const s = summary(lats);
    const figures = {
      rate,
      throttled: throttled[ch.upstreamId] ?? 0,
      duplicates: dups,
    };
    console.log(pad([
      ch.phone,
      t.length,
      span.toFixed(1),
      rate.toFixed(1),
      `${((rate / LIMIT) * 100).toFixed(1)}%`,
      figures.throttled,
      dups,
      lats.length,
      s.p50.toFixed(0),
      s.p99.toFixed(0),
      s.max.toFixed(0),
    ], widths));
    return figures;
  });
}

/** Live sends by phase; returns the accept -> simulator p99 of each phase. */
export function reportLive(run: Run): Record<"enqueue" | "drain", number> {
  const p99 = { enqueue: NaN, drain: NaN };
  for (const phase of ["enqueue", "drain"] as const) {
    const sends = run.live.filter((l) => l.phase === phase);
    const lats = sends.map((l) => liveLatency(run, l))
      .filter((v): v is number => v !== null);
    const s = summary(lats);
    p99[phase] = s.p99;
    const h = summary(
      sends.filter((l) => l.status === 201).map((l) => l.httpMs),
    );
    const rejected = sends.filter((l) => l.status !== 201).length;
    console.log(`
  live sends ${
      phase === "enqueue"
        ? "while the backlog is being enqueued"
        : "while the backlog drains"
    }: ${sends.length} (${rejected} rejected, ${
      sends.length - rejected - lats.length
    } never reached the simulator)
    accept -> simulator: p50 ${ms(s.p50)}  p99 ${ms(s.p99)}  max ${ms(s.max)}
    POST /messages HTTP: p50 ${ms(h.p50)}  p99 ${ms(h.p99)}  max ${ms(h.max)}`);
    if (phase !== "enqueue") continue;
    const split = enqueueSplit(run);
    for (
      const [label, part] of [
        ["sent in the first second", split.firstSecond],
        ["sent after it", split.after],
      ] as const
    ) {
      const p = summary(part);
      console.log(
        `      ${label}: ${part.length}, p50 ${ms(p.p50)}  p99 ${
          ms(p.p99)
        }  max ${ms(p.max)}`,
      );
    }
  }
  return p99;
}

/** How long from the start the enqueue phase's live sends count as its first second. */
export const FIRST_SECOND_MS = 1_000;

/**
 * The enqueue phase's accept -> simulator latencies, split at one second
 * after the start: the first sends of a run meet a cold server (route
 * groups and handlers loading, the first batches) and, unless the client
 * warmed them (--warm-live), new connections that the busy server accepts
 * late; one p99 over both hides which of the two a change moved.
 */
export function enqueueSplit(
  run: Pick<Run, "live" | "firstAt" | "started">,
): { firstSecond: number[]; after: number[] } {
  const out = { firstSecond: [] as number[], after: [] as number[] };
  for (const l of run.live) {
    if (l.phase !== "enqueue") continue;
    const lat = liveLatency(run as Run, l);
    if (lat === null) continue;
    (l.acceptAt - run.started < FIRST_SECOND_MS ? out.firstSecond : out.after)
      .push(lat);
  }
  return out;
}

export function report(
  run: Run,
  stats: { duplicates: number; cap: number },
): void {
  const enqueueEnd = run.enqueueDoneAt ?? Date.now();
  const enqueueS = (enqueueEnd - run.started) / 1000;
  const arrived = arrivedBatch(run);
  let last = 0;
  for (const id of run.batchIds) {
    last = Math.max(last, run.firstAt.get(id) ?? 0);
  }
  const drainS = (last - run.started) / 1000;
  const complete = arrived === run.batchIds.size && !run.enqueueing;
  console.log(`
  enqueue:     ${run.batchIds.size} batch messages accepted in ${
    enqueueS.toFixed(1)
  } s (${
    (run.batchIds.size / enqueueS).toFixed(0)
  } msg/s, ${run.enqueueErrors} not accepted)
  drain:       ${arrived} of ${run.batchIds.size} reached the simulator; ${
    complete
      ? `the last one at t+${drainS.toFixed(1)} s`
      : `CAPPED at ${stats.cap} s (last seen at t+${drainS.toFixed(1)} s)`
  }
  aggregate:   ${
    (arrived / drainS).toFixed(1)
  } msg/s over ${run.channels.length} numbers (limit ${
    run.channels.length * LIMIT
  })
  duplicates:  ${stats.duplicates} (simulator sends > 1 per bizOpaque)
`);
}

/**
 * Deliveries per subscription and event type, duplicates, events some
 * subscription still lacks, and event -> receipt lag. Returns the
 * duplicate deliveries and the events missing somewhere.
 */
export function reportHooks(
  run: Run,
): { duplicates: number; missing: number } {
  const h = run.hooks;
  if (h.subscriptions.length === 0) {
    console.log("\n  webhooks: none subscribed (--subscriptions 0)");
    return { duplicates: 0, missing: 0 };
  }
  const messages = [...run.batchIds, ...run.live.map((l) => l.id)]
    .filter((id) => id !== null).length;
  console.log(
    `\n  webhooks: ${h.subscriptions.length} subscriptions (all event kinds) on a receiver in this process answering 200 at once`,
  );
  let duplicates = 0;
  h.subscriptions.forEach((id, i) => {
    const byEvent = h.counts.get(id) ?? new Map<string, number>();
    const total = [...byEvent.values()].reduce((a, b) => a + b, 0);
    const dups = h.duplicates.get(id) ?? 0;
    duplicates += dups;
    const kinds = [...byEvent].map(([k, n]) => `${k} ${n}`).join(", ");
    console.log(
      `    subscription ${
        i + 1
      } (${id}): ${total} events (${kinds}), ${dups} duplicate deliveries`,
    );
  });
  const complete = messages - eventsOutstanding(run);
  const missing = eventsPartial(h);
  const lag = summary(h.lags);
  const { live, batch } = statusLagsByLane(run);
  const customer = customerLags(run);
  const line = (s: ReturnType<typeof summary>) =>
    `p50 ${ms(s.p50)}  p99 ${ms(s.p99)}  max ${ms(s.max)}`;
  console.log(
    `    messages whose "${h.finalStatus}" event reached every subscription: ${complete} of ${messages}
    events delivered to some subscription but not to every one: ${missing} of ${h.reached.size}
    event (UUIDv7 time of its id, set when its row is written) -> receiver: ${
      line(lag)
    }
      message.status_changed of live sends (${live.length}): ${
      line(summary(live))
    }
      message.status_changed of batch messages (${batch.length}): ${
      line(summary(batch))
    }
    customers writing during the run (${run.inbound.size}): message.received, customer (simulator asked to send) -> receiver (${customer.length}): ${
      line(summary(customer))
    }`,
  );
  return { duplicates, missing };
}

/** For each message.received delivery of a customer who wrote during the run: receipt minus the time they wrote. */
export function customerLags(run: Pick<Run, "inbound" | "hooks">): number[] {
  return run.hooks.received.flatMap(({ phone, at }) => {
    const wrote = run.inbound.get(phone);
    return wrote === undefined ? [] : [at - wrote];
  });
}

/** The status events' lags split by the lane of their message: live sends and the rest. */
export function statusLagsByLane(
  run: Pick<Run, "live" | "hooks">,
): { live: number[]; batch: number[] } {
  const liveIds = new Set(run.live.map((l) => l.id));
  const out = { live: [] as number[], batch: [] as number[] };
  for (const { messageId, lag } of run.hooks.statusLags) {
    (liveIds.has(messageId) ? out.live : out.batch).push(lag);
  }
  return out;
}

function cpuLine(
  what: string,
  from: CpuMark,
  to: CpuMark,
  key: "server" | "sim" | "self",
): string {
  const used = to[key] - from[key];
  const share = (used / (to.at - from.at)) * 100;
  return `${what}: ${used.toFixed(0)} ms CPU (${share.toFixed(0)} % of a core)`;
}

/** Server CPU per message the simulator received; returns the whole-run figure. */
export function reportCpu(run: Run, sends: number): number {
  const { start, sent, end } = run.cpu;
  if (!start || !end) return NaN;
  const perMessage = (to: CpuMark) => (to.server - start.server) / sends;
  const seconds = ((end.at - start.at) / 1000).toFixed(1);
  const outstanding = eventsOutstanding(run);
  const until = outstanding === 0
    ? "every message's events delivered"
    : `the end of the wait, ${outstanding} messages' events still outstanding, so a floor`;
  console.log(`
  CPU over the run (t0 -> ${until}, ${seconds} s; /proc utime+stime):
    ${cpuLine("server", start, end, "server")} = ${
    perMessage(end).toFixed(2)
  } ms per message the simulator received (${sends}): accept, send, status callbacks, events, webhooks
    ${
    sent
      ? `  of which until the whole backlog was seen at the simulator (polled each second; t+${
        ((sent.at - start.at) / 1000).toFixed(1)
      } s): ${(sent.server - start.server).toFixed(0)} ms`
      : ""
  }
    ${cpuLine("simulator", start, end, "sim")}; ${
    cpuLine("this process (client, receiver)", start, end, "self")
  }`);
  return perMessage(end);
}

/** One line per issue 7 target, with the measured figure. */
export function reportTargets(figures: {
  channels: ChannelFigures[];
  liveP99: Record<"enqueue" | "drain", number>;
  duplicates: number;
  hookDuplicates: number;
  /** Events some subscription never received (see eventsPartial). */
  hookMissing: number;
  cpuMsPerMessage: number;
}): void {
  const rates = figures.channels.map((c) => c.rate);
  const worst = Math.min(...rates) / LIMIT;
  const throttled = figures.channels.reduce((a, c) => a + c.throttled, 0);
  const mark = (ok: boolean) => ok ? "ok  " : "MISS";
  const { enqueue, drain } = figures.liveP99;
  console.log(`
  targets (issue 7):
    ${mark(worst >= TARGET.share)} every number >= ${
    TARGET.share * 100
  } % of 80 msg/s: lowest ${(worst * 100).toFixed(1)} %
    ${mark(throttled === 0)} 0 throttles (130429): ${throttled}
    ${
    mark(figures.duplicates === 0 && figures.hookDuplicates === 0)
  } 0 duplicates: ${figures.duplicates} sends, ${figures.hookDuplicates} webhook deliveries
    ${
    mark(figures.hookMissing === 0)
  } every event to every subscription: ${figures.hookMissing} missing
    ${
    mark(enqueue <= TARGET.liveP99Ms && drain <= TARGET.liveP99Ms)
  } live accept -> upstream p99 <= ${TARGET.liveP99Ms} ms: enqueue ${
    ms(enqueue)
  }, drain ${ms(drain)}
    ${
    mark(figures.cpuMsPerMessage <= TARGET.cpuMsPerMessage)
  } server CPU <= ${TARGET.cpuMsPerMessage} ms per message: ${
    figures.cpuMsPerMessage.toFixed(2)
  } ms`);
}

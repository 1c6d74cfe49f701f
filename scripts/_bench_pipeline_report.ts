// deno-lint-ignore-file no-console
/** What bench_pipeline.ts measures, and how it prints it. */
import type { DevServer } from "./_bench.ts";
import { ms, summary } from "./_bench_load.ts";

const LIMIT = 80;

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

export interface Run {
  server: DevServer;
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

export function reportChannels(
  run: Run,
  throttled: Record<string, number>,
): void {
  const byUpstream = new Map(run.channels.map((c, i) => [c.upstreamId, i]));
  const times = run.channels.map(() => [] as number[]);
  const counts = new Map<string, number>();
  for (const s of run.samples) {
    if (!s.opaque) continue;
    counts.set(s.opaque, (counts.get(s.opaque) ?? 0) + 1);
    const ch = byUpstream.get(s.upstreamId);
    if (ch !== undefined && run.batchIds.has(s.opaque)) times[ch]!.push(s.at);
  }
  const widths = [13, 6, 7, 7, 6, 7, 5, 6, 8, 8, 8];
  console.log(pad([
    "channel",
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
  run.channels.forEach((ch, i) => {
    const t = times[i]!;
    const span = t.length > 1 ? (Math.max(...t) - Math.min(...t)) / 1000 : NaN;
    const rate = t.length / span;
    let dups = 0;
    for (const [id, c] of run.batchChannel) {
      if (c === i && (counts.get(id) ?? 0) > 1) dups++;
    }
    const lats = run.live.filter((l) => l.ch === i)
      .map((l) => liveLatency(run, l)).filter((v): v is number => v !== null);
    const s = summary(lats);
    console.log(pad([
      ch.phone,
      t.length,
      span.toFixed(1),
      rate.toFixed(1),
      `${((rate / LIMIT) * 100).toFixed(0)}%`,
      throttled[ch.upstreamId] ?? 0,
      dups,
      lats.length,
      s.p50.toFixed(0),
      s.p99.toFixed(0),
      s.max.toFixed(0),
    ], widths));
  });
}

export function reportLive(run: Run): void {
  for (const phase of ["enqueue", "drain"] as const) {
    const sends = run.live.filter((l) => l.phase === phase);
    const lats = sends.map((l) => liveLatency(run, l))
      .filter((v): v is number => v !== null);
    const s = summary(lats);
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
  }
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
  } msg/s over ${run.channels.length} channels (limit ${
    run.channels.length * LIMIT
  })
  duplicates:  ${stats.duplicates} (simulator sends > 1 per bizOpaque)
`);
}

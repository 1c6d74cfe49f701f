// deno-lint-ignore-file no-console
/**
 * The send pipeline under a campaign backlog: 10 channels, 5,000 batch messages each (global
 * template `welcome`), and one live POST /messages every 200 ms on a random channel while the
 * backlog drains. Reports per channel the rate achieved at the upstream simulator against the
 * 80 msg/s limit, 130429 throttles, and live-send latency (client accept -> upstream receipt;
 * the simulator runs in the server's process on the same host, so the clocks agree).
 *
 *   deno run -A scripts/bench_pipeline.ts [--per-channel 5000] [--cap 240] [--live-every 200]
 */
import {
  api,
  cli,
  type DevServer,
  freshNumber,
  machine,
  ms,
  numberFlags,
  reportServerLog,
  sim,
  startDevServer,
  summary,
} from "./_bench.ts";

const flags = numberFlags({
  "per-channel": 5000,
  cap: 240,
  "live-every": 200,
  "extra-channels": 9,
});
const BATCH = 100;
const ENQUEUE_CONCURRENCY = 4;
const PAGE = 5000;
const LIMIT = 80;

interface Channel {
  id: string;
  upstreamId: string;
  phone: string;
}

interface LiveSend {
  id: string | null;
  ch: number;
  /** Client clock right before the POST. */
  acceptAt: number;
  httpMs: number;
  phase: "enqueue" | "drain";
  status: number;
}

interface Run {
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

function sleep(msec: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, msec));
}

function welcome(to: string, n: number, channelId?: string) {
  return {
    ...(channelId ? { phoneNumberId: channelId } : {}),
    to,
    type: "template",
    template: {
      name: "welcome",
      language: { code: "en_US" },
      components: [{
        type: "body",
        parameters: [{ type: "text", text: `Guest ${n}` }],
      }],
    },
  };
}

async function createChannel(server: DevServer, n: number): Promise<Channel> {
  const phone = `+1555020000${n}`;
  const upstreamId = `20000000000000${n}`;
  const ch = await cli(server, [
    "channels",
    "create",
    ...["--account", server.accountSlug, "--phone", phone],
    ...["--display-name", `Bench ${n}`, "--upstream-phone-number-id"],
    ...[upstreamId, "--waba-id", "102290129340398"],
    ...["--access-token", "bench-token"],
  ]) as { id: string };
  await sim(server, "POST", "/numbers", {
    phoneNumberId: upstreamId,
    displayPhoneNumber: phone,
  });
  return { id: ch.id, upstreamId, phone };
}

async function createChannels(server: DevServer): Promise<Channel[]> {
  const channels: Channel[] = [
    { id: server.channelId, upstreamId: "", phone: server.phoneNumber },
  ];
  const extra = Array.from(
    { length: flags["extra-channels"] },
    (_, i) => i + 1,
  );
  // Three CLI processes at a time: each is a full `deno run` start-up.
  for (let i = 0; i < extra.length; i += 3) {
    channels.push(
      ...await Promise.all(
        extra.slice(i, i + 3).map((n) => createChannel(server, n)),
      ),
    );
  }
  const listed = await api(server, "GET", "/channels");
  for (const ch of channels) {
    const row = listed.body.data.find((c: { id: string }) => c.id === ch.id);
    ch.upstreamId = row.phoneNumberId;
  }
  return channels;
}

/** Reads the simulator's new send records (paged by offset). */
async function poll(run: Run): Promise<void> {
  for (;;) {
    const page = await sim(
      run.server,
      "GET",
      `/messages?offset=${run.offset}&limit=${PAGE}`,
    );
    for (const m of page.messages) {
      const at = Date.parse(m.at);
      run.samples.push({
        opaque: m.bizOpaque,
        upstreamId: m.phoneNumberId,
        at,
      });
      if (m.bizOpaque && !run.firstAt.has(m.bizOpaque)) {
        run.firstAt.set(m.bizOpaque, at);
      }
    }
    run.offset = page.nextOffset;
    if (page.messages.length < PAGE) return;
  }
}

/** Enqueues the backlog as fast as it goes: batches of 100, round-robin over the channels. */
async function enqueueBacklog(run: Run): Promise<void> {
  const batches = (run.channels.length * flags["per-channel"]) / BATCH;
  let next = 0;
  await Promise.all(
    Array.from({ length: ENQUEUE_CONCURRENCY }, async () => {
      while (next < batches && Date.now() < run.capAt) {
        const b = next++;
        const ch = b % run.channels.length;
        const messages = Array.from({ length: BATCH }, (_, k) => {
          const n = b * BATCH + k;
          return welcome(freshNumber(n), n);
        });
        const res = await api(run.server, "POST", "/messages/batch", {
          defaultPhoneNumberId: run.channels[ch]!.id,
          messages,
        });
        if (res.status !== 202) {
          run.enqueueErrors += BATCH;
          continue;
        }
        for (const item of res.body.data.items) {
          if (item.result !== "queued") {
            run.enqueueErrors++;
            continue;
          }
          run.batchIds.add(item.message.id);
          run.batchChannel.set(item.message.id, ch);
        }
      }
    }),
  );
  run.enqueueing = false;
  run.enqueueDoneAt = Date.now();
}

/** One live send every N ms on a random channel, without waiting for the previous answer. */
async function liveSends(run: Run, keepGoing: () => boolean): Promise<void> {
  const inflight: Promise<void>[] = [];
  for (let k = 0; keepGoing() && Date.now() < run.capAt; k++) {
    const ch = Math.floor(Math.random() * run.channels.length);
    const n = 10_000_000 + k;
    const body = welcome(freshNumber(n), n, run.channels[ch]!.id);
    const record: LiveSend = {
      id: null,
      ch,
      acceptAt: Date.now(),
      httpMs: 0,
      phase: run.enqueueing ? "enqueue" : "drain",
      status: 0,
    };
    run.live.push(record);
    inflight.push(
      api(run.server, "POST", "/messages", body).then((res) => {
        record.httpMs = Date.now() - record.acceptAt;
        record.status = res.status;
        if (res.status === 201) record.id = res.body.data.id;
      }),
    );
    const due = run.started + (k + 1) * flags["live-every"];
    await sleep(Math.max(0, due - Date.now()));
  }
  await Promise.all(inflight);
}

function arrivedBatch(run: Run): number {
  let n = 0;
  for (const id of run.batchIds) if (run.firstAt.has(id)) n++;
  return n;
}

/** Polls the simulator until the whole backlog arrived or the cap; prints progress. */
async function watch(run: Run): Promise<void> {
  let lastProgress = Date.now();
  while (Date.now() < run.capAt) {
    await sleep(1000);
    await poll(run);
    const arrived = arrivedBatch(run);
    if (Date.now() - lastProgress >= 15_000) {
      lastProgress = Date.now();
      const t = ((Date.now() - run.started) / 1000).toFixed(0);
      console.log(
        `  t+${t}s: ${
          run.enqueueing ? "enqueueing, " : ""
        }${run.batchIds.size}` +
          ` queued, ${arrived} at the simulator, ${run.live.length} live sends`,
      );
    }
    if (!run.enqueueing && arrived >= run.batchIds.size) return;
  }
}

const liveLatency = (run: Run, l: LiveSend): number | null =>
  l.id && run.firstAt.has(l.id) ? run.firstAt.get(l.id)! - l.acceptAt : null;

function pad(values: (string | number)[], widths: number[]): string {
  return "  " +
    values.map((v, i) => String(v).padStart(widths[i]!)).join(" ");
}

function reportChannels(run: Run, throttled: Record<string, number>): void {
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

function reportLive(run: Run): void {
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

function report(run: Run, stats: { duplicates: number }): void {
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
      : `CAPPED at ${flags.cap} s (last seen at t+${drainS.toFixed(1)} s)`
  }
  aggregate:   ${
    (arrived / drainS).toFixed(1)
  } msg/s over ${run.channels.length} channels (limit ${
    run.channels.length * LIMIT
  })
  duplicates:  ${stats.duplicates} (simulator sends > 1 per bizOpaque)
`);
}

async function main(): Promise<void> {
  const server = await startDevServer();
  try {
    const channels = await createChannels(server);
    console.log(
      `bench_pipeline: ${channels.length} channels x ${
        flags["per-channel"]
      } batch messages (template welcome), a live send every ${
        flags["live-every"]
      } ms on a random channel\n  ${machine()}; client and server share it`,
    );
    const started = Date.now();
    const run: Run = {
      server,
      channels,
      started,
      capAt: started + flags.cap * 1000,
      enqueueing: true,
      enqueueDoneAt: null,
      enqueueErrors: 0,
      batchIds: new Set(),
      batchChannel: new Map(),
      live: [],
      samples: [],
      firstAt: new Map(),
      offset: 0,
    };
    let liveOn = true;
    const enqueue = enqueueBacklog(run);
    const live = liveSends(run, () => liveOn);
    await watch(run);
    liveOn = false;
    await Promise.all([enqueue, live]);
    // The last live sends jump the queue: give them a few seconds to reach the simulator.
    const graceUntil = Date.now() + 10_000;
    do {
      await poll(run);
      if (run.live.every((l) => !l.id || run.firstAt.has(l.id))) break;
      await sleep(250);
    } while (Date.now() < graceUntil);
    const stats = await sim(server, "GET", "/stats");
    report(run, stats);
    reportChannels(run, stats.throttledByNumber);
    reportLive(run);
    reportServerLog(server);
  } finally {
    await server.stop();
  }
}

await main();

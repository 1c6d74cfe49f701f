// deno-lint-ignore-file no-console
/**
 * The send pipeline the way production runs it: `main.ts serve` alone on one
 * core, the upstream simulator (`main.ts simulator`) as its own process on the
 * other (see _bench_serve.ts), N numbers with a campaign backlog each (batch
 * messages with the global template `welcome`), one live POST /messages every
 * 200 ms on a random number, a new customer writing every 500 ms (through
 * the simulator), and every event delivered to two webhook subscriptions on
 * a receiver in this process. Reports per number the rate at
 * the upstream against the 80 msg/s limit, 130429 throttles and duplicate
 * sends; live-send latency (client accept -> upstream receipt: the simulator
 * and this process share the host clock) while enqueueing and while draining;
 * webhook deliveries, duplicates and lag (live sends' status events, batch
 * messages', and a customer's message from writing to the receiver apart);
 * and server CPU per message.
 *
 *   deno run -A bench/pipeline.ts [--numbers 10] [--per-channel 5000]
 *     [--cap 300] [--live-every 200] [--subscriptions 2] [--mixed 0|1]
 *     [--statuses 3|2|1] [--pin 1|0] [--warm-live 0] [--inbound-every 500]
 *
 * --mixed 1 spreads every batch over all numbers (to compare against one number per batch);
 * --statuses N stops the simulator's status callbacks after sent (1) or delivered (2);
 * --pin 0 runs unpinned even where taskset works;
 * --warm-live N has the live client open N keep-alive connections before the start;
 * --inbound-every 0 has no customer write.
 * BENCH_LIVE_DUMP=file writes every live send (accept time, HTTP time,
 * status, id, simulator receipt) as JSON, to line up with server-side traces.
 */
import {
  api,
  freshNumber,
  type Json,
  machine,
  numberFlags,
  reportServerLog,
  sim,
  sleep,
} from "./_bench.ts";
import { startReceiver } from "./_bench_receiver.ts";
import {
  cpuMs,
  type ServeBench,
  startServeBench,
  threadCores,
} from "./_bench_serve.ts";
import {
  arrivedBatch,
  type Channel,
  type CpuMark,
  eventsOutstanding,
  eventsPartial,
  type LiveSend,
  newHooks,
  recordDelivery,
  report,
  reportChannels,
  reportCpu,
  reportHooks,
  reportLive,
  reportTargets,
  type Run,
} from "./_bench_pipeline_report.ts";

const flags = numberFlags({
  numbers: 10,
  "per-channel": 5000,
  cap: 300,
  "live-every": 200,
  /** Webhook subscriptions (every event kind) on the local receiver. */
  subscriptions: 2,
  /** 1: every batch mixes all numbers (10 items each) instead of one number per batch. */
  mixed: 0,
  /** Status callbacks per send: 3 = sent, delivered, read (the default); 1 = sent only. */
  statuses: 3,
  /** 0: run unpinned even where taskset works. */
  pin: 1,
  /** Keep-alive connections the live client opens before the start (0: each first send opens its own). */
  "warm-live": 0,
  /** A new customer writes on a random number every N ms (through the simulator); 0: none. */
  "inbound-every": 500,
});
const BATCH = 100;
const ENQUEUE_CONCURRENCY = 4;
const PAGE = 5000;
/** After the backlog reached the simulator, how long its last events may take to be delivered. */
const EVENTS_GRACE_MS = 60_000;
const WABA_ID = "102290129340398";
const TEMPLATE_COMPONENTS = [
  { type: "HEADER", format: "TEXT", text: "Welcome!" },
  { type: "BODY", text: "Hi {{1}}, welcome to Demo Business!" },
];

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

/** Channels and the global `welcome` template, made with the CLI before `serve` starts. */
async function prepare(
  cli: (args: string[]) => Promise<{ id: string }>,
  channels: Channel[],
): Promise<void> {
  await cli([
    "templates",
    "create",
    ...["--account", "bench", "--name", "welcome", "--language", "en_US"],
    ...["--category", "MARKETING", "--status", "approved"],
    ...["--components", JSON.stringify(TEMPLATE_COMPONENTS)],
  ]);
  const numbers = Array.from({ length: flags.numbers }, (_, i) => i + 1);
  // Three CLI processes at a time: each is a full `deno run` start-up.
  for (let i = 0; i < numbers.length; i += 3) {
    channels.push(
      ...await Promise.all(
        numbers.slice(i, i + 3).map(async (n) => {
          const phone = `+1555${String(200_000 + n).padStart(7, "0")}`;
          const upstreamId = String(200_000_000_000_000 + n);
          const ch = await cli([
            "channels",
            "create",
            ...["--account", "bench", "--phone", phone],
            ...["--display-name", `Bench ${n}`, "--upstream-phone-number-id"],
            ...[upstreamId, "--waba-id", WABA_ID],
            ...["--access-token", "bench-token"],
          ]);
          return { id: ch.id, upstreamId, phone };
        }),
      ),
    );
  }
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

/** Enqueues the backlog as fast as it goes: batches of up to 100, round-robin over the numbers. */
async function enqueueBacklog(run: Run): Promise<void> {
  const perChannel = flags["per-channel"];
  const batches = run.channels.length * Math.ceil(perChannel / BATCH);
  let next = 0;
  await Promise.all(
    Array.from({ length: ENQUEUE_CONCURRENCY }, async () => {
      while (next < batches && Date.now() < run.capAt) {
        const b = next++;
        const ch = b % run.channels.length;
        // The last batch of a number holds what is left of its --per-channel.
        const round = Math.floor(b / run.channels.length);
        const size = Math.min(BATCH, perChannel - round * BATCH);
        const messages = Array.from({ length: size }, (_, k) => {
          const n = b * BATCH + k;
          if (!flags.mixed) return welcome(freshNumber(n), n);
          const own = (b + k) % run.channels.length;
          return welcome(freshNumber(n), n, run.channels[own]!.id);
        });
        const res = await api(run.server, "POST", "/messages/batch", {
          defaultPhoneNumberId: run.channels[ch]!.id,
          messages,
        });
        if (res.status !== 202) {
          run.enqueueErrors += size;
          continue;
        }
        for (const item of res.body.data.items) {
          if (item.result !== "queued") {
            run.enqueueErrors++;
            continue;
          }
          run.batchIds.add(item.message.id);
          const own = flags.mixed ? (b + item.index) % run.channels.length : ch;
          run.batchChannel.set(item.message.id, own);
        }
      }
    }),
  );
  run.enqueueing = false;
  run.enqueueDoneAt = Date.now();
}

/**
 * One live send every N ms on a random number, without waiting for the
 * previous answer; the requests go out from a Worker (_bench_live_client.ts).
 */
async function liveSends(
  run: Run,
  client: Worker,
  keepGoing: () => boolean,
): Promise<void> {
  const pending = new Map<number, (answer: Json) => void>();
  client.onmessage = (e) => {
    pending.get(e.data.k)?.(e.data);
    pending.delete(e.data.k);
  };
  const inflight: Promise<void>[] = [];
  for (let k = 0; keepGoing() && Date.now() < run.capAt; k++) {
    const ch = Math.floor(Math.random() * run.channels.length);
    const n = 10_000_000 + k;
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
      new Promise<Json>((resolve) => pending.set(k, resolve)).then((a) => {
        Object.assign(record, {
          acceptAt: a.acceptAt,
          httpMs: a.httpMs,
          status: a.status,
          id: a.id,
        });
      }),
    );
    client.postMessage({
      k,
      url: `${run.server.baseUrl}/api/v2/messages`,
      key: run.server.apiKey,
      body: welcome(freshNumber(n), n, run.channels[ch]!.id),
    });
    const due = run.started + (k + 1) * flags["live-every"];
    await sleep(Math.max(0, due - Date.now()));
  }
  await Promise.all(inflight);
  client.terminate();
}

/**
 * A new customer writes every N ms on a random number: the simulator posts
 * Meta's signed callback to the server, as a customer's phone would make it.
 */
async function customersWrite(
  run: Run,
  keepGoing: () => boolean,
): Promise<void> {
  const every = flags["inbound-every"];
  if (every === 0) return;
  for (let k = 0; keepGoing() && Date.now() < run.capAt; k++) {
    const from = freshNumber(20_000_000 + k);
    const ch = run.channels[Math.floor(Math.random() * run.channels.length)]!;
    run.inbound.set(from, Date.now());
    await sim(run.server, "POST", "/inbound", {
      to: ch.phone,
      from,
      name: "Customer",
      type: "text",
      text: { body: `hello ${k}` },
    });
    const due = run.started + (k + 1) * every;
    await sleep(Math.max(0, due - Date.now()));
  }
}

/**
 * The live sends' client (a Worker, see _bench_live_client.ts); with
 * --warm-live N it first opens N keep-alive connections to the server
 * (GET /healthz), so the first live sends do not each open one while the
 * server is busy with the first batches.
 */
async function startLiveClient(baseUrl: string): Promise<Worker> {
  const client = new Worker(
    new URL("./_bench_live_client.ts", import.meta.url).href,
    { type: "module" },
  );
  const connections = flags["warm-live"];
  if (connections > 0) {
    await new Promise<void>((resolve) => {
      client.onmessage = () => resolve();
      client.postMessage({ warm: `${baseUrl}/healthz`, connections });
    });
  }
  return client;
}

function progress(run: Run, what: string): void {
  const t = ((Date.now() - run.started) / 1000).toFixed(0);
  console.log(`  t+${t}s: ${what}`);
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
      progress(
        run,
        `${run.enqueueing ? "enqueueing, " : ""}${run.batchIds.size}` +
          ` queued, ${arrived} at the simulator, ${run.live.length} live sends`,
      );
    }
    if (!run.enqueueing && arrived >= run.batchIds.size) return;
  }
}

/**
 * Waits until every message's final status event reached every subscription,
 * and every event that reached one reached all (or the grace ends).
 */
async function settleEvents(run: Run): Promise<void> {
  const until = Date.now() + EVENTS_GRACE_MS;
  let lastProgress = Date.now();
  const owed = () => eventsOutstanding(run) + eventsPartial(run.hooks);
  while (owed() > 0 && Date.now() < until) {
    await sleep(100);
    if (Date.now() - lastProgress >= 15_000) {
      lastProgress = Date.now();
      progress(
        run,
        `${eventsOutstanding(run)} messages' events outstanding, ${
          eventsPartial(run.hooks)
        } events not yet at every subscription`,
      );
    }
  }
}

function cpuMark(server: ServeBench): CpuMark {
  return {
    at: Date.now(),
    server: cpuMs(server.server.proc.child.pid),
    sim: cpuMs(server.sim.proc.child.pid),
    self: cpuMs(Deno.pid),
  };
}

async function subscribe(run: Run, url: string, n: number): Promise<string> {
  const res = await api(run.server, "POST", "/webhooks", {
    url: `${url}?s=${n}`,
    events: [
      "message.received",
      "message.status_changed",
      "conversation.created",
      "contact.created",
    ],
  });
  if (res.status !== 201) {
    throw new Error(`POST /webhooks: ${JSON.stringify(res.body)}`);
  }
  return res.body.data.id;
}

async function main(): Promise<void> {
  const stopAfter = (["sent", "delivered", "read"] as const)[
    flags.statuses - 1
  ];
  if (!stopAfter) throw new Error("--statuses must be 1, 2 or 3");
  const channels: Channel[] = [];
  const server = await startServeBench({
    pin: flags.pin !== 0,
    prepare: (cli) => prepare(cli, channels),
  });
  const hooks = newHooks(stopAfter);
  const receiver = startReceiver((d) => recordDelivery(hooks, d));
  try {
    for (const ch of channels) {
      await sim(server, "POST", "/numbers", {
        phoneNumberId: ch.upstreamId,
        displayPhoneNumber: ch.phone,
      });
    }
    await sim(server, "POST", "/behaviour", { stopAfter });
    const run: Run = {
      server,
      channels,
      started: 0,
      capAt: 0,
      enqueueing: true,
      enqueueDoneAt: null,
      enqueueErrors: 0,
      batchIds: new Set(),
      batchChannel: new Map(),
      live: [],
      samples: [],
      firstAt: new Map(),
      offset: 0,
      hooks,
      inbound: new Map(),
      cpu: {},
    };
    for (let i = 0; i < flags.subscriptions; i++) {
      hooks.subscriptions.push(await subscribe(run, receiver.url, i));
    }
    console.log(
      `bench_pipeline: ${channels.length} numbers x ${
        flags["per-channel"]
      } batch messages (template welcome), a live send every ${
        flags["live-every"]
      } ms on a random number, a new customer writing every ${
        flags["inbound-every"]
      } ms\n  ${
        flags.mixed ? "each batch mixes all numbers" : "one number per batch"
      }; status callbacks per send: ${flags.statuses} (up to "${stopAfter}"); ${flags.subscriptions} webhook subscriptions` +
        `\n  main.ts serve and main.ts simulator as separate processes; ${server.pinning}` +
        `\n  ${machine()}`,
    );
    const client = await startLiveClient(server.baseUrl);
    run.started = Date.now();
    run.capAt = run.started + flags.cap * 1000;
    run.cpu.start = cpuMark(server);
    let liveOn = true;
    const enqueue = enqueueBacklog(run);
    const live = liveSends(run, client, () => liveOn);
    const customers = customersWrite(run, () => liveOn);
    await watch(run);
    run.cpu.sent = cpuMark(server);
    liveOn = false;
    await Promise.all([enqueue, live, customers]);
    // The last live sends jump the queue: give them a few seconds to reach the simulator.
    const graceUntil = Date.now() + 10_000;
    do {
      await poll(run);
      if (run.live.every((l) => !l.id || run.firstAt.has(l.id))) break;
      await sleep(250);
    } while (Date.now() < graceUntil);
    await settleEvents(run);
    run.cpu.end = cpuMark(server);
    await poll(run);
    const stats = await sim(server, "GET", "/stats");
    report(run, { ...stats, cap: flags.cap });
    const dump = Deno.env.get("BENCH_LIVE_DUMP");
    if (dump) {
      Deno.writeTextFileSync(
        dump,
        JSON.stringify(run.live.map((l) => ({
          ...l,
          simAt: l.id ? run.firstAt.get(l.id) ?? null : null,
        }))),
      );
    }
    const perChannel = reportChannels(run, stats.throttledByNumber);
    const liveP99 = reportLive(run);
    const delivered = reportHooks(run);
    const cpuMsPerMessage = reportCpu(run, stats.sends);
    const serverCores = threadCores(server.server.proc.child.pid).join(" / ");
    console.log(`    server threads may run on CPU(s): ${serverCores}`);
    reportTargets({
      channels: perChannel,
      liveP99,
      duplicates: stats.duplicates,
      hookDuplicates: delivered.duplicates,
      hookMissing: delivered.missing,
      cpuMsPerMessage,
    });
    reportServerLog(server);
  } finally {
    await receiver.stop();
    await server.stop();
  }
}

await main();

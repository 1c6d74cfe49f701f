// deno-lint-ignore-file no-console
/**
 * The send pipeline under a campaign backlog: 10 channels, 5,000 batch messages each (global
 * template `welcome`), and one live POST /messages every 200 ms on a random channel while the
 * backlog drains. Reports per channel the rate achieved at the upstream simulator against the
 * 80 msg/s limit, 130429 throttles, and live-send latency (client accept -> upstream receipt;
 * the simulator runs in the server's process on the same host, so the clocks agree).
 *
 *   deno run -A scripts/bench_pipeline.ts [--per-channel 5000] [--cap 240] [--live-every 200]
 *     [--extra-channels 9] [--mixed 0|1] [--statuses 3|2|1]
 *
 * --mixed 1 spreads every batch over all channels (to compare against one channel per batch);
 * --statuses N stops the simulator's status callbacks after sent (1) or delivered (2).
 */
import {
  api,
  cli,
  type DevServer,
  freshNumber,
  machine,
  numberFlags,
  reportServerLog,
  sim,
  sleep,
  startDevServer,
} from "./_bench.ts";
import {
  arrivedBatch,
  type Channel,
  type LiveSend,
  report,
  reportChannels,
  reportLive,
  type Run,
} from "./_bench_pipeline_report.ts";

const flags = numberFlags({
  "per-channel": 5000,
  cap: 240,
  "live-every": 200,
  "extra-channels": 9,
  /** 1: every batch mixes all channels (10 items each) instead of one channel per batch. */
  mixed: 0,
  /** Status callbacks per send: 3 = sent, delivered, read (the default); 1 = sent only. */
  statuses: 3,
});
const BATCH = 100;
const ENQUEUE_CONCURRENCY = 4;
const PAGE = 5000;

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
          if (!flags.mixed) return welcome(freshNumber(n), n);
          const own = (b + k) % run.channels.length;
          return welcome(freshNumber(n), n, run.channels[own]!.id);
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
          const own = flags.mixed ? (b + item.index) % run.channels.length : ch;
          run.batchChannel.set(item.message.id, own);
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

async function main(): Promise<void> {
  const server = await startDevServer();
  try {
    const channels = await createChannels(server);
    const stopAfter = (["sent", "delivered", "read"] as const)[
      flags.statuses - 1
    ];
    if (!stopAfter) throw new Error("--statuses must be 1, 2 or 3");
    await sim(server, "POST", "/behaviour", { stopAfter });
    console.log(
      `bench_pipeline: ${channels.length} channels x ${
        flags["per-channel"]
      } batch messages (template welcome), a live send every ${
        flags["live-every"]
      } ms on a random channel\n  ${
        flags.mixed ? "each batch mixes all channels" : "one channel per batch"
      }; status callbacks per send: ${flags.statuses} (up to "${stopAfter}")` +
        `\n  ${machine()}; client and server share it`,
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
    report(run, { ...stats, cap: flags.cap });
    reportChannels(run, stats.throttledByNumber);
    reportLive(run);
    reportServerLog(server);
  } finally {
    await server.stop();
  }
}

await main();

// deno-lint-ignore-file no-console
/**
 * Webhook delivery benchmarks, each on a fresh dev server (a real process) with
 * the receivers in this process on 127.0.0.1:
 *
 *   1. throughput: a backlog of events x subscriptions held by the receiver,
 *      then drained to a receiver that answers 200 at once (deliveries/s);
 *   2. latency: POST /contacts paced at --rate events/s to one subscription;
 *      event time (data.createdAt) to the attempt reaching the receiver;
 *   3. isolation: --healthy subscriptions with and without one black-holed
 *      subscription (kept enabled), healthy latency compared.
 *
 *   deno run -A bench/webhooks.ts [--subscriptions 10] [--events 3000]
 *     [--rate 500] [--duration 15] [--healthy 20] [--hol-rate 50] [--only 1|2|3]
 */
import {
  api,
  type DevServer,
  freshNumber,
  machine,
  ms,
  numberFlags,
  reportServerLog,
  sleep,
  startDevServer,
  summary,
} from "./_bench.ts";
import { startReceiver } from "./_bench_receiver.ts";

const flags = numberFlags({
  subscriptions: 10,
  events: 3_000,
  rate: 500,
  duration: 15,
  healthy: 20,
  "hol-rate": 50,
  /** Run only part 1, 2 or 3 (0: all). */
  only: 0,
});

interface Arrival {
  at: number;
  webhookId: string;
  /** Receipt time minus the event's data.createdAt. */
  lagMs: number;
}

/** The shared receiver, keeping each arrival with its lag behind data.createdAt. */
function startLagReceiver() {
  const arrivals: Arrival[] = [];
  const receiver = startReceiver((d) =>
    arrivals.push({
      at: d.at,
      webhookId: d.webhookId,
      lagMs: d.at - Date.parse(d.data.createdAt),
    })
  );
  return { ...receiver, arrivals };
}

/** A TCP server that accepts, reads, and never answers. */
function startBlackHole() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  (async () => {
    for await (const conn of listener) {
      conns.push(conn);
      conn.readable.pipeTo(new WritableStream()).catch(() => {});
    }
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/hook`,
    stop() {
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      listener.close();
    },
  };
}

async function subscribe(server: DevServer, url: string): Promise<string> {
  const res = await api(server, "POST", "/webhooks", {
    url,
    events: ["contact.created"],
  });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
  return res.body.data.id;
}

let contactSeq = 0;
async function createContact(server: DevServer): Promise<void> {
  const res = await api(server, "POST", "/contacts", {
    phoneNumber: freshNumber(++contactSeq),
  });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
}

/** Creates contacts at `rate` per second for `seconds` (open loop, up to 64 in flight). */
async function paced(server: DevServer, rate: number, seconds: number) {
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const inFlight = new Set<Promise<void>>();
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1_000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    while (inFlight.size >= 64) await Promise.race(inFlight);
    const p = createContact(server).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await Promise.all(inFlight);
  return (performance.now() - started) / 1_000;
}

async function waitFor(check: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function throughput() {
  const server = await startDevServer();
  const receiver = startLagReceiver();
  try {
    for (let i = 0; i < flags.subscriptions; i++) {
      await subscribe(server, `${receiver.url}?s=${i}`);
    }
    receiver.hold();
    const creating = performance.now();
    const queue = Array.from({ length: flags.events }, (_, i) => i);
    await Promise.all(Array.from({ length: 32 }, async () => {
      while (queue.shift() !== undefined) await createContact(server);
    }));
    const createSeconds = (performance.now() - creating) / 1_000;
    const total = flags.events * flags.subscriptions;
    const inFlight = receiver.arrivals.length;
    const opened = Date.now();
    receiver.release();
    await waitFor(
      () => receiver.arrivals.length >= total,
      120_000,
      `${total} deliveries`,
    );
    const last = receiver.arrivals.at(-1)!.at;
    const drained = total - inFlight;
    const seconds = (last - opened) / 1_000;
    console.log(
      `1. throughput: ${flags.events} events x ${flags.subscriptions} subscriptions = ${total} deliveries
   backlog built in ${
        createSeconds.toFixed(1)
      } s (POST /contacts, 32 clients) while the receiver held ${inFlight} in flight
   drained ${drained} deliveries in ${
        seconds.toFixed(2)
      } s to a receiver answering 200 at once
   => ${(drained / seconds).toFixed(0)} deliveries/s (target >= 2,000/s)`,
    );
    reportServerLog(server);
  } finally {
    await receiver.stop();
    await server.stop();
  }
}

async function latency() {
  const server = await startDevServer();
  const receiver = startLagReceiver();
  try {
    await subscribe(server, receiver.url);
    // Warm-up at the full rate (JIT, statement cache, connection pool), not counted.
    const warm = Math.round(flags.rate * 3);
    await paced(server, flags.rate, 3);
    await waitFor(() => receiver.arrivals.length >= warm, 30_000, "warm-up");
    receiver.arrivals.length = 0;
    const seconds = await paced(server, flags.rate, flags.duration);
    const expected = Math.round(flags.rate * flags.duration);
    await waitFor(
      () => receiver.arrivals.length >= expected,
      60_000,
      `${expected} deliveries`,
    );
    const s = summary(receiver.arrivals.map((a) => a.lagMs));
    console.log(
      `2. latency: ${expected} events at ${flags.rate}/s for ${
        seconds.toFixed(1)
      } s (after 3 s of warm-up at that rate), one subscription
   event time (data.createdAt, set before the commit) to first attempt at the receiver:
   p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${
        ms(s.max)
      }; median per-second p99 ${
        ms(medianOfSecondP99(receiver.arrivals))
      } (target p99 <= 50 ms)`,
    );
    reportServerLog(server);
  } finally {
    await receiver.stop();
    await server.stop();
  }
}

/** Healthy-subscription lag with or without one black-holed subscription. */
async function isolationRun(withDead: boolean) {
  const server = await startDevServer();
  const receiver = startLagReceiver();
  const hole = startBlackHole();
  let keepAlive = true;
  let reEnabled = 0;
  try {
    for (let i = 0; i < flags.healthy; i++) {
      await subscribe(server, `${receiver.url}?s=${i}`);
    }
    const dead = withDead ? await subscribe(server, hole.url) : undefined;
    // The dead one would be disabled after 10 timeouts; keep it enabled, as a user fighting it would.
    const guard = (async () => {
      while (dead && keepAlive) {
        const res = await api(server, "GET", `/webhooks/${dead}`);
        if (res.body?.data?.enabled === false) {
          await api(server, "PATCH", `/webhooks/${dead}`, { enabled: true });
          reEnabled++;
        }
        await sleep(500);
      }
    })();
    await paced(server, flags["hol-rate"], 3); // warm-up, not counted
    await waitFor(
      () => receiver.arrivals.length >= flags["hol-rate"] * 3 * flags.healthy,
      30_000,
      "the warm-up deliveries",
    );
    receiver.arrivals.length = 0;
    await paced(server, flags["hol-rate"], flags.duration);
    const expected = Math.round(flags["hol-rate"] * flags.duration) *
      flags.healthy;
    await waitFor(
      () => receiver.arrivals.length >= expected,
      60_000,
      `${expected} healthy deliveries`,
    );
    keepAlive = false;
    await guard;
    const metrics = await (await fetch(`${server.baseUrl}/metrics`)).text();
    const timeouts =
      /webhook_deliveries_total\{outcome="timeout",kind="event"\} (\d+)/
        .exec(metrics)?.[1] ?? "0";
    return {
      lag: summary(receiver.arrivals.map((a) => a.lagMs)),
      perSecondP99: medianOfSecondP99(receiver.arrivals),
      deliveries: receiver.arrivals.length,
      timeouts,
      reEnabled,
    };
  } finally {
    keepAlive = false;
    hole.stop();
    await receiver.stop();
    await server.stop();
  }
}

/** The median over the run's seconds of each second's p99 lag: robust to one stall of the machine. */
function medianOfSecondP99(arrivals: Arrival[]): number {
  const t0 = arrivals[0]?.at ?? 0;
  const bySecond = new Map<number, number[]>();
  for (const a of arrivals) {
    const k = Math.floor((a.at - t0) / 1_000);
    const lags = bySecond.get(k) ?? [];
    lags.push(a.lagMs);
    bySecond.set(k, lags);
  }
  const p99s = [...bySecond.values()].map((v) => summary(v).p99);
  return summary(p99s).p50;
}

async function isolation() {
  const rate = flags["hol-rate"] * flags.healthy;
  console.log(
    `3. isolation: ${flags.healthy} healthy subscriptions, ${
      flags["hol-rate"]
    } events/s (${rate} healthy deliveries/s) for ${flags.duration} s, runs alternating`,
  );
  const runs: Array<
    { dead: boolean; r: Awaited<ReturnType<typeof isolationRun>> }
  > = [];
  for (const dead of [false, true, false, true]) {
    const r = await isolationRun(dead);
    runs.push({ dead, r });
    console.log(
      `   ${dead ? "one black-holed  " : "no dead one      "} p50 ${
        ms(r.lag.p50)
      }  p99 ${ms(r.lag.p99)}  max ${ms(r.lag.max)}  median per-second p99 ${
        ms(r.perSecondP99)
      } (${r.deliveries} deliveries${
        dead
          ? `; the dead one: ${r.timeouts} timeouts, re-enabled ${r.reEnabled} times`
          : ""
      })`,
    );
  }
  const median = (dead: boolean, pick: (r: (typeof runs)[0]["r"]) => number) =>
    summary(runs.filter((x) => x.dead === dead).map((x) => pick(x.r))).p50;
  const ratio = (pick: (r: (typeof runs)[0]["r"]) => number) =>
    ((median(true, pick) / median(false, pick) - 1) * 100).toFixed(1);
  console.log(
    `   => healthy p99 ${ratio((r) => r.lag.p99)} %, per-second p99 ${
      ratio((r) => r.perSecondP99)
    } % vs without (target within 10 %)`,
  );
}

console.log(
  `bench_webhooks: ${machine()}; server, receivers and load share it`,
);
if (!flags.only || flags.only === 1) await throughput();
if (!flags.only || flags.only === 2) await latency();
if (!flags.only || flags.only === 3) await isolation();

// Issue 27: behind a proxy, forged posts must not stop Meta's. Real sockets
// on 127.0.0.1, so the gate sees the peer address Deno.serve reports (the
// "proxy"); the attacker runs in its own process (tests/http/_attacker.ts);
// each test runs a few seconds of wall clock. Its latency bound is measured
// against a quiet run of the same posts in the same test, and `deno task
// test` runs this file after the parallel suite, alone, so other test files
// do not share the cores meanwhile.
import assert from "node:assert/strict";
import { HELD_LENGTH, HELD_SENT } from "./_attacker.ts";
import { APP_SECRET, holdOpen, metaPost, quantile } from "./_attack.ts";
import { createHarness, type Harness } from "../_harness.ts";
import { WEBHOOK_GATE_LIMITS } from "../../src/http/webhook_gate.ts";

/** The harness app listening on 127.0.0.1 (Deno.serve hands it the real peer address). */
interface Listening extends AsyncDisposable {
  h: Harness;
  port: number;
}

async function listen(env: Record<string, string>): Promise<Listening> {
  const h = await createHarness({
    env: { META_APP_SECRET: APP_SECRET, ...env },
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen() {} },
    (req, info) => h.app.fetch(req, info),
  );
  return {
    h,
    port: server.addr.port,
    async [Symbol.asyncDispose]() {
      await server.shutdown();
      await h[Symbol.asyncDispose]();
    },
  };
}

/** The value of one sample of /metrics, read in-process as a loopback client. */
async function metric(h: Harness, series: string): Promise<number> {
  const res = await h.app.fetch(
    new Request("http://localhost/metrics"),
    { remoteAddr: { hostname: "127.0.0.1", port: 1, transport: "tcp" } },
  );
  const text = await res.text();
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  if (!line) throw new Error(`No sample ${series} in /metrics`);
  return Number(line.slice(series.length + 1));
}

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BOUND = 16 * 1024 * 1024;
const ATTACKER = new URL("./_attacker.ts", import.meta.url).pathname;

/** Meta's traffic: a post once a second for 4 s and a burst of 50 at once after 1.5 s. */
async function metaTraffic(
  port: number,
  forwardedFor?: string,
): Promise<{ status: number; ms: number }[]> {
  const singles = [0, 1_000, 2_000, 3_000].map((at) =>
    delay(at).then(() => metaPost(port, forwardedFor))
  );
  const burst = delay(1_500).then(() =>
    Promise.all(
      Array.from({ length: 50 }, () => metaPost(port, forwardedFor)),
    )
  );
  return [...await Promise.all(singles), ...await burst];
}

/** The same posts with nobody else sending: what they cost on this machine now. */
async function quietP99(port: number, forwardedFor?: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 4; i++) {
    times.push((await metaPost(port, forwardedFor)).ms);
  }
  const burst = await Promise.all(
    Array.from({ length: 50 }, () => metaPost(port, forwardedFor)),
  );
  return quantile([...times, ...burst.map((r) => r.ms)], 0.99);
}

interface Attack {
  maxBuffered: number;
  /** Ends the attack; what its posts were answered. */
  stop(): Promise<{ forged: number[]; held: number[] }>;
}

/** Runs tests/http/_attacker.ts in its own process while /metrics is watched. */
function attack(
  listening: Awaited<ReturnType<typeof listen>>,
  mode: "proxy" | "rotating",
): Attack {
  const { port, h } = listening;
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", ATTACKER, String(port), mode],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let stopped = false;
  const result: Attack = {
    maxBuffered: 0,
    async stop() {
      stopped = true;
      await watching;
      await child.stdin.close();
      const out = await child.output();
      return JSON.parse(new TextDecoder().decode(out.stdout));
    },
  };
  const watching = (async () => {
    while (!stopped) {
      result.maxBuffered = Math.max(
        result.maxBuffered,
        await metric(h, 'meta_webhook_unverified_bytes{state="buffered"}'),
      );
      await delay(25);
    }
  })();
  return result;
}

async function assertMetaUnharmed(
  listening: Awaited<ReturnType<typeof listen>>,
  options: { meta?: string; attacker: "proxy" | "rotating" },
): Promise<void> {
  const { port, h } = listening;
  const quiet = await quietP99(port, options.meta);
  const running = attack(listening, options.attacker);
  // The held bodies take their slots first.
  const deadline = Date.now() + 5_000;
  while (
    await metric(h, 'meta_webhook_unverified_bytes{state="peak"}') <
      HELD_SENT
  ) {
    assert.ok(Date.now() < deadline, "the attack never started");
    await delay(20);
  }
  await delay(300);
  const posts = await metaTraffic(port, options.meta);
  const answered = await running.stop();

  assert.deepEqual(
    [...new Set(posts.map((p) => p.status))],
    [200],
    "every signed post answered 200",
  );
  const added = quantile(posts.map((p) => p.ms), 0.99) - quiet;
  assert.ok(
    added < 250,
    `p99 added latency ${added.toFixed(0)} ms (quiet p99 ${
      quiet.toFixed(0)
    } ms)`,
  );
  assert.ok(answered.forged.length >= 15, `${answered.forged.length} forged`);
  assert.deepEqual([...new Set(answered.forged)], [401]);
  const peak = await metric(h, 'meta_webhook_unverified_bytes{state="peak"}');
  assert.ok(peak <= BOUND, `peak ${peak} bytes`);
  assert.ok(running.maxBuffered <= BOUND, `${running.maxBuffered} bytes`);
  // The bound was reached for real: the held bodies filled it.
  assert.ok(
    peak >= Math.floor(BOUND / HELD_LENGTH) * HELD_SENT,
    `peak ${peak} bytes: the held bodies did not fill the bound`,
  );
  assert.ok(answered.held.length > 0, "held bodies were cut off");
  assert.ok(
    answered.held.every((s) => s === 503 || s === 400),
    `held bodies answered ${[...new Set(answered.held)]}`,
  );
}

Deno.test({
  name:
    "without TRUSTED_PROXIES, forged posts and held 2 MB bodies from the proxy's address never refuse or delay Meta's signed posts, and buffered bytes stay within the bound",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using listening = await listen({});
    await assertMetaUnharmed(listening, { attacker: "proxy" });
  },
});

Deno.test({
  name:
    "with TRUSTED_PROXIES, forged posts from the proxy's address and from rotating forwarded addresses never refuse or delay Meta's signed posts",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using listening = await listen({ TRUSTED_PROXIES: "127.0.0.1" });
    await assertMetaUnharmed(listening, {
      meta: "173.252.127.5",
      attacker: "rotating",
    });
  },
});

Deno.test({
  name:
    "16 bodies trickled from 4 addresses hold every read slot, yet a signed post from a fresh address answers 200 within 2 s",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using listening = await listen({ TRUSTED_PROXIES: "127.0.0.1" });
    const { port, h } = listening;
    const { maxReads } = WEBHOOK_GATE_LIMITS;
    const trickles = await Promise.all(
      Array.from({ length: maxReads }, (_, i) =>
        holdOpen(port, {
          length: 4_096,
          sent: 1,
          forwardedFor: `198.51.100.${(i % 4) + 1}`,
        })),
    );
    const deadline = Date.now() + 5_000;
    while (
      await metric(h, 'meta_webhook_unverified_reads{state="reading"}') <
        maxReads
    ) {
      assert.ok(
        Date.now() < deadline,
        "the trickled bodies never took the slots",
      );
      await delay(10);
    }
    const signed = await metaPost(port, "173.252.127.9");
    assert.equal(signed.status, 200);
    assert.ok(signed.ms < 2_000, `${signed.ms.toFixed(0)} ms`);
    for (const t of trickles) t.close();
    await Promise.all(trickles.map((t) => t.answered));
  },
});

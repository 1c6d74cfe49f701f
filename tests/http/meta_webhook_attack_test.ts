// Issue 27: behind a proxy, forged posts must not stop Meta's. Real sockets
// on 127.0.0.1, so the gate sees the peer address Deno.serve reports (the
// "proxy"); each test runs a few seconds of wall clock.
import assert from "node:assert/strict";
import {
  forgedPost,
  holdOpen,
  keepHeld,
  listen,
  metaPost,
  metric,
  quantile,
} from "./_attack.ts";
import { WEBHOOK_GATE_LIMITS } from "../../src/http/webhook_gate.ts";

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));
const BOUND = 16 * 1024 * 1024;
const HELD_LENGTH = 2_000_000;
/** Each held body sends this much, then stops: the bytes it holds are real. */
const HELD_SENT = 1_500_000;

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
  forged: number[];
  held: number[];
  maxBuffered: number;
  stop(): Promise<void>;
}

/** Five forged posts a second and 30 forged 2 MB bodies held open, while /metrics is watched. */
function attack(
  listening: Awaited<ReturnType<typeof listen>>,
  forwardedFor: () => string | undefined,
): Attack {
  const { port, h } = listening;
  const forged: number[] = [];
  let stopped = false;
  const posting = (async () => {
    const pending: Promise<void>[] = [];
    while (!stopped) {
      pending.push(
        forgedPost(port, forwardedFor()).then((s) => void forged.push(s)),
      );
      await delay(200);
    }
    await Promise.all(pending);
  })();
  const held = keepHeld(port, 30, {
    length: HELD_LENGTH,
    sent: HELD_SENT,
    forwardedFor: () => forwardedFor() ?? "",
  });
  const result: Attack = {
    forged,
    held: held.answers,
    maxBuffered: 0,
    async stop() {
      stopped = true;
      await held.stop();
      await posting;
      await watching;
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
  options: { meta?: string; attacker: () => string | undefined },
): Promise<void> {
  const { port, h } = listening;
  const quiet = await quietP99(port, options.meta);
  const running = attack(listening, options.attacker);
  await delay(300); // the held bodies take their slots first
  const posts = await metaTraffic(port, options.meta);
  await running.stop();

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
  assert.ok(running.forged.length >= 15, `${running.forged.length} forged`);
  assert.deepEqual([...new Set(running.forged)], [401]);
  const peak = await metric(h, 'meta_webhook_unverified_bytes{state="peak"}');
  assert.ok(peak <= BOUND, `peak ${peak} bytes`);
  assert.ok(running.maxBuffered <= BOUND, `${running.maxBuffered} bytes`);
  // The bound was reached for real: the held bodies filled it.
  assert.ok(
    peak >= Math.floor(BOUND / HELD_LENGTH) * HELD_SENT,
    `peak ${peak} bytes: the held bodies did not fill the bound`,
  );
  assert.ok(running.held.length > 0, "held bodies were cut off");
  assert.ok(
    running.held.every((s) => s === 503 || s === 400),
    `held bodies answered ${[...new Set(running.held)]}`,
  );
}

Deno.test({
  name:
    "without TRUSTED_PROXIES, forged posts and held 2 MB bodies from the proxy's address never refuse or delay Meta's signed posts, and buffered bytes stay within the bound",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using listening = await listen({});
    await assertMetaUnharmed(listening, { attacker: () => undefined });
  },
});

Deno.test({
  name:
    "with TRUSTED_PROXIES, forged posts from the proxy's address and from rotating forwarded addresses never refuse or delay Meta's signed posts",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using listening = await listen({ TRUSTED_PROXIES: "127.0.0.1" });
    let n = 0;
    await assertMetaUnharmed(listening, {
      meta: "173.252.127.5",
      // Every other post from the proxy itself, the rest from a new address each.
      attacker: () =>
        n++ % 2 ? undefined : `203.0.${Math.floor(n / 250) % 250}.${n % 250}`,
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

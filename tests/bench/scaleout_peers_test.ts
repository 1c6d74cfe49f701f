// The scale-out harness's peers: the strict upstream (a sliding 1 s window
// per number in front of the simulator, every send recorded), the proxy
// (round-robin over ready instances, never a retry) and the sqld monitor
// (a wedged sqld ends the phase instead of hanging it).
import assert from "node:assert/strict";
import { StrictUpstream } from "../../bench/_strict_upstream.ts";
import { RoundRobinProxy } from "../../bench/_lb.ts";
import { SqldMonitor } from "../../bench/_scaleout_watch.ts";
import type { HarnessDb } from "../../bench/_scaleout_db.ts";
import { waitFor } from "../_support/wait.ts";

function sendRequest(
  instance: string,
  phoneNumberId: string,
  messageId: string,
  body: Record<string, unknown> = {},
): Request {
  return new Request(
    `http://upstream/i/${instance}/v22.0/${phoneNumberId}/messages`,
    {
      method: "POST",
      headers: {
        authorization: "Bearer token",
        "content-type": "application/json",
      },
      body: JSON.stringify({
        messaging_product: "whatsapp",
        to: "+5491122334455",
        type: "text",
        text: { body: "hola" },
        biz_opaque_callback_data: messageId,
        ...body,
      }),
    },
  );
}

Deno.test("the strict upstream accepts `rate` sends per number in any window (t - 1 s, t] and answers 130429 beyond", async () => {
  let now = 0;
  const upstream = new StrictUpstream("secret", {
    rate: 2,
    statuses: 0,
    callbackUrl: null,
  }, () => now);
  const at = async (t: number, number: string, id: string) => {
    now = t;
    const res = await upstream.handle(sendRequest("a", number, id));
    return { status: res.status, body: await res.json() };
  };
  assert.equal((await at(0, "111", "m1")).status, 200);
  assert.equal((await at(400, "111", "m2")).status, 200);
  const refused = await at(999, "111", "m3");
  assert.equal(refused.status, 400);
  assert.equal(refused.body.error.code, 130429);
  // Another number has its own window.
  assert.equal((await at(999, "222", "m4")).status, 200);
  // At 1000 the send at 0 has left the window (t - 1 s is out).
  assert.equal((await at(1_000, "111", "m3")).status, 200);
  // A send the simulator refuses gives its slot back: two more fit after it.
  now = 2_000;
  const bad = await upstream.handle(
    sendRequest("b", "333", "m5", { type: "nonsense" }),
  );
  assert.equal(bad.status, 400);
  assert.equal((await bad.json()).error.code, 131051);
  assert.equal((await at(2_001, "333", "m5")).status, 200);
  assert.equal((await at(2_002, "333", "m6")).status, 200);
  assert.deepEqual(
    upstream.records.map((
      r,
    ) => [r.t, r.instance, r.messageId, r.attempt, r.outcome]),
    [
      [0, "a", "m1", 1, "accepted"],
      [400, "a", "m2", 1, "accepted"],
      [999, "a", "m3", 1, "throttled"],
      [999, "a", "m4", 1, "accepted"],
      [1_000, "a", "m3", 2, "accepted"],
      [2_000, "b", "m5", 1, "rejected"],
      [2_001, "a", "m5", 2, "accepted"],
      [2_002, "a", "m6", 1, "accepted"],
    ],
  );
  const accepted = upstream.records.filter((r) => r.outcome === "accepted");
  assert.ok(accepted.every((r) => r.wamid?.startsWith("wamid.")));
  assert.equal(upstream.records[2]!.code, 130429);
});

Deno.test("the proxy sends only to ready instances, in turn, and a refused connection fails the request without a retry", async () => {
  const hits: Record<string, number> = { a: 0, b: 0, c: 0 };
  const backend = (name: string, ready: boolean) =>
    Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      (req) => {
        if (new URL(req.url).pathname === "/readyz") {
          return new Response(null, { status: ready ? 200 : 503 });
        }
        hits[name]!++;
        return Response.json({ from: name });
      },
    );
  const a = backend("a", true);
  const b = backend("b", true);
  const c = backend("c", false);
  const proxy = new RoundRobinProxy();
  const get = () => proxy.handle(new Request("http://lb/api/v2/account"));
  try {
    proxy.setTargets(
      [a, b, c].map((s) => `http://127.0.0.1:${s.addr.port}`),
    );
    await waitFor(
      () => proxy.stats().targets.filter((t) => t.ready).length === 2,
      { what: "the first health checks" },
    );
    const from: string[] = [];
    for (let i = 0; i < 4; i++) from.push((await (await get()).json()).from);
    assert.deepEqual(from, ["a", "b", "a", "b"]);
    // a goes away before the next health check: its turn fails, once, and b is not tried instead.
    await a.shutdown();
    const res = await get();
    assert.equal(res.status, 502);
    assert.equal(res.headers.get("x-lb-failure"), "connection_refused");
    await res.body?.cancel();
    assert.deepEqual(hits, { a: 2, b: 2, c: 0 });
    assert.deepEqual(proxy.stats().failed, { connection_refused: 1 });
    await waitFor(() => !proxy.stats().targets[0]!.ready, {
      what: "the health check to see a gone",
    });
    assert.deepEqual(await (await get()).json(), { from: "b" });
    await b.shutdown();
    await waitFor(() => !proxy.stats().targets[1]!.ready, {
      what: "the health check to see b gone",
    });
    const none = await get();
    assert.equal(none.status, 503);
    assert.equal(none.headers.get("x-lb-failure"), "no_ready_instance");
    await none.body?.cancel();
    assert.equal(hits.c, 0);
  } finally {
    proxy.close();
    await c.shutdown();
  }
});

Deno.test("the sqld monitor calls a phase off once writes stop coming back, and not before", async () => {
  const failing: HarnessDb = {
    query: (_sql, _args, timeoutMs = 0) =>
      new Promise((_, reject) =>
        setTimeout(
          () => reject(new Error("The operation timed out")),
          timeoutMs,
        )
      ),
  };
  const abort = new AbortController();
  const monitor = new SqldMonitor(failing, Deno.pid, abort, {
    everyMs: 1,
    timeoutMs: 5,
  });
  await waitFor(() => abort.signal.aborted, { what: "the monitor to give up" });
  await monitor.stop();
  assert.equal(abort.signal.reason, "wedged");
  assert.ok(monitor.wedgedAt);
  // Six in a row with sqld idle; two would do if it spun (this process is not sqld and barely runs).
  assert.ok(monitor.probes.length >= 2 && monitor.probes.length <= 6);
  assert.ok(monitor.probes.every((p) => p.ms === Infinity));
  assert.match(monitor.wedgeNote, /probe writes in a row got no answer/);

  let writes = 0;
  const healthy: HarnessDb = {
    query: () => {
      writes++;
      return Promise.resolve([]);
    },
  };
  const calm = new AbortController();
  const ok = new SqldMonitor(healthy, Deno.pid, calm, { everyMs: 1 });
  await waitFor(() => writes >= 20, { what: "20 probe writes" });
  await ok.stop();
  assert.equal(calm.signal.aborted, false);
  assert.ok(ok.probes.every((p) => Number.isFinite(p.ms)));
});

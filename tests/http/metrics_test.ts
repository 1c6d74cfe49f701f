import assert from "node:assert/strict";
import { createHarness, type Harness } from "../_harness.ts";
import { enqueueUnchecked, PRIORITY } from "../../src/jobs/queue.ts";
import { addMs } from "../../src/db/time.ts";

type Fetch = (req: Request, env?: unknown) => Response | Promise<Response>;

/** A request as Deno.serve hands it to Hono: its connection info is the env. */
async function scrape(
  h: Harness,
  options: { from?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  const info = options.from
    ? { remoteAddr: { hostname: options.from, port: 50_000, transport: "tcp" } }
    : undefined;
  const fetch = h.app.fetch as Fetch;
  return await fetch(
    new Request("http://localhost/metrics", { headers: options.headers }),
    info,
  );
}

Deno.test("GET /metrics without METRICS_TOKEN answers loopback clients only, never a proxied request", async () => {
  await using h = await createHarness();
  for (const from of ["127.0.0.1", "::1", "::ffff:127.0.0.1"]) {
    const res = await scrape(h, { from });
    assert.equal(res.status, 200, from);
    assert.equal(
      res.headers.get("content-type"),
      "text/plain; version=0.0.4; charset=utf-8",
    );
    await res.body?.cancel();
  }
  for (const from of ["10.0.0.7", "203.0.113.9", undefined]) {
    const res = await scrape(h, from ? { from } : {});
    assert.equal(res.status, 403, String(from));
    assert.equal((await res.json()).error.code, "FORBIDDEN");
  }
  const proxied = await scrape(h, {
    from: "127.0.0.1",
    headers: { "X-Forwarded-For": "198.51.100.4" },
  });
  assert.equal(proxied.status, 403);
  await proxied.body?.cancel();
});

Deno.test("serve: GET /metrics without METRICS_TOKEN is refused to everyone, loopback included (a plain proxy_pass looks local)", async () => {
  await using h = await createHarness({ mode: "serve" });
  for (const from of ["127.0.0.1", "::1", "10.0.0.7"]) {
    const res = await scrape(h, { from });
    assert.equal(res.status, 403, from);
    const body = await res.json();
    assert.equal(body.error.code, "FORBIDDEN");
    assert.match(body.error.message, /set METRICS_TOKEN/);
  }
  await using withToken = await createHarness({
    mode: "serve",
    env: { METRICS_TOKEN: "metrics-token-0123456789" },
  });
  const res = await scrape(withToken, {
    from: "203.0.113.9",
    headers: { Authorization: "Bearer metrics-token-0123456789" },
  });
  assert.equal(res.status, 200);
  await res.body?.cancel();
});

Deno.test("dev behind a trusted proxy: /metrics goes by the client address the proxy names", async () => {
  await using h = await createHarness({
    env: { TRUSTED_PROXIES: "127.0.0.1" },
  });
  const proxied = await scrape(h, {
    from: "127.0.0.1",
    headers: { "X-Forwarded-For": "198.51.100.4" },
  });
  assert.equal(proxied.status, 403);
  await proxied.body?.cancel();
});

Deno.test("GET /metrics with METRICS_TOKEN needs the bearer token from anywhere", async () => {
  const token = "metrics-token-0123456789";
  await using h = await createHarness({ env: { METRICS_TOKEN: token } });
  const none = await scrape(h, { from: "127.0.0.1" });
  assert.equal(none.status, 401);
  assert.equal(none.headers.get("www-authenticate"), 'Bearer realm="metrics"');
  await none.body?.cancel();
  const wrong = await scrape(h, {
    from: "10.0.0.7",
    headers: { Authorization: `Bearer ${token}x` },
  });
  assert.equal(wrong.status, 401);
  await wrong.body?.cancel();
  const right = await scrape(h, {
    from: "10.0.0.7",
    headers: { Authorization: `Bearer ${token}` },
  });
  assert.equal(right.status, 200);
  await right.body?.cancel();
});

Deno.test("GET /metrics shows requests by route, queue depth and age per lane, and webhook outcomes", async () => {
  await using h = await createHarness();
  await h.request("GET", "/api/v2/account");
  await h.request("GET", "/api/v2/account");
  await h.request("GET", `/api/v2/contacts/${crypto.randomUUID()}`);
  await h.request("GET", "/nowhere");
  const now = h.clock.now();
  await enqueueUnchecked(h.container.db, {
    kind: "t.x",
    payload: {},
    priority: PRIORITY.batch,
    runAt: addMs(now, -90_000),
  }, now);
  await enqueueUnchecked(h.container.db, {
    kind: "t.y",
    payload: {},
    priority: PRIORITY.webhook,
    runAt: addMs(now, 60_000),
  }, now);
  h.container.metrics.webhookDeliveries.inc({
    outcome: "timeout",
    kind: "event",
  });
  h.container.metrics.webhookDuration.observe({ outcome: "timeout" }, 10);
  const res = await scrape(h, { from: "127.0.0.1" });
  const text = await res.text();
  const line = (prefix: string) =>
    text.split("\n").find((l) => l.startsWith(prefix));
  assert.equal(
    line(
      'http_requests_total{method="GET",route="/api/v2/account",status="200"}',
    ),
    'http_requests_total{method="GET",route="/api/v2/account",status="200"} 2',
  );
  assert.ok(
    line(
      'http_requests_total{method="GET",route="/api/v2/contacts/:id",status="404"}',
    ),
    "a route pattern, not the path",
  );
  assert.ok(
    line('http_requests_total{method="GET",route="unmatched",status="404"}'),
  );
  assert.ok(
    line(
      'http_request_duration_seconds_bucket{method="GET",route="/api/v2/account",le="+Inf"} 2',
    ),
  );
  assert.equal(line('jobs_ready{lane="batch"}'), 'jobs_ready{lane="batch"} 1');
  assert.equal(
    line('jobs_oldest_ready_age_seconds{lane="batch"}'),
    'jobs_oldest_ready_age_seconds{lane="batch"} 90',
  );
  assert.equal(
    line('jobs_ready{lane="webhook"}'),
    'jobs_ready{lane="webhook"} 0',
    "not due yet",
  );
  assert.equal(
    line('webhook_deliveries_total{outcome="timeout",kind="event"}'),
    'webhook_deliveries_total{outcome="timeout",kind="event"} 1',
  );
  assert.ok(
    line(
      'webhook_delivery_duration_seconds_bucket{outcome="timeout",le="10"} 1',
    ),
  );
  assert.ok(line('webhook_subscriptions_disabled{reason="auto"} 0'));
  assert.match(
    text,
    /# TYPE webhook_subscriptions_auto_disabled_total counter/,
  );
});

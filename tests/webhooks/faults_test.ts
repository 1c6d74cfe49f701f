// The delivery engine against a fault-injecting receiver on loopback: every
// outcome is logged and scheduled as the spec and DESIGN §3 say.
import assert from "node:assert/strict";
import {
  blackhole,
  drip,
  type FaultServer,
  reset,
  respond,
  stall,
  startFaultServer,
} from "../_support/fault_server.ts";
import {
  createContact,
  type Json,
  nextPhone,
  type WebhookHarness,
  webhookTest,
} from "../_support/webhooks.ts";
import { JITTER } from "../../src/jobs/retry_policy.ts";

async function rowOf(h: WebhookHarness, hookId: string): Promise<Json> {
  const res = await h.request(
    "GET",
    `/api/v2/webhooks/${hookId}/deliveries?status=all`,
  );
  const attempted = res.body.data.filter((r: Json) => r.attemptedAt !== null);
  assert.equal(attempted.length, 1, JSON.stringify(res.body.data));
  return attempted[0];
}

async function pendingOf(h: WebhookHarness, hookId: string): Promise<Json[]> {
  const res = await h.request(
    "GET",
    `/api/v2/webhooks/${hookId}/deliveries?status=pending`,
  );
  return res.body.data;
}

/** One subscription per server, each with a custom header (which the Location GET must not carry). */
async function subscribeAll(h: WebhookHarness, servers: FaultServer[]) {
  const hooks: Json[] = [];
  for (const server of servers) {
    hooks.push(
      await h.subscribe({
        url: server.url("/hook"),
        events: ["contact.created"],
        headers: { "X-Api-Key": "secret-key" },
      }),
    );
  }
  return hooks;
}

webhookTest(
  "5xx, 429 with Retry-After, redirects and resets are logged and scheduled as specified",
  async (h) => {
    const servers = await Promise.all(
      Array.from({ length: 5 }, () => startFaultServer()),
    );
    try {
      const [s500, s429, s301, sMeta, sReset] = servers as [
        FaultServer,
        FaultServer,
        FaultServer,
        FaultServer,
        FaultServer,
      ];
      s500.script(respond(500, { body: "boom" }));
      s429.script(respond(429, { headers: { "Retry-After": "30" } }));
      s301.script(
        respond(301, { headers: { Location: "/moved?x=1" } }),
        respond(200, { body: "the new place" }),
      );
      sMeta.script(
        respond(302, {
          headers: { Location: "http://169.254.169.254/latest/meta-data/" },
        }),
      );
      sReset.script(reset());
      const [h500, h429, h301, hMeta, hReset] = await subscribeAll(h, servers);
      await createContact(h, nextPhone());
      await h.deliver();

      const r500 = await rowOf(h, h500.id);
      assert.equal(r500.status, "failed");
      assert.equal(r500.statusCode, 500);
      assert.equal(r500.outcome, "5xx");
      assert.equal(r500.responseBody, "boom");
      const wait = Date.parse(r500.nextAttemptAt) -
        Date.parse(r500.attemptedAt);
      assert.ok(
        wait >= 5_000 * (1 - JITTER) && wait <= 5_000 * (1 + JITTER),
        `${wait}`,
      );
      assert.equal((await pendingOf(h, h500.id)).length, 1);

      const r429 = await rowOf(h, h429.id);
      assert.equal(r429.statusCode, 429);
      assert.equal(r429.outcome, "4xx");
      assert.equal(
        Date.parse(r429.nextAttemptAt) - Date.parse(r429.attemptedAt),
        30_000,
        "Retry-After wins over the 5 s step",
      );

      // 3xx is a success: the POST is not repeated, the Location is probed once with GET.
      const r301 = await rowOf(h, h301.id);
      assert.equal(r301.status, "success");
      assert.equal(r301.statusCode, 301);
      assert.equal(r301.outcome, "3xx");
      assert.equal(r301.redirectLocation, s301.url("/moved?x=1"));
      assert.equal(r301.redirectStatusCode, 200);
      assert.equal(r301.nextAttemptAt, null);
      assert.deepEqual(
        s301.requests.map((r) => `${r.method} ${r.target}`),
        ["POST /hook", "GET /moved?x=1"],
      );
      const probe = s301.requests[1]!;
      const names = probe.headers.map(([n]) => n.toLowerCase());
      assert.equal(names.includes("x-service-signature"), false);
      assert.equal(names.includes("x-api-key"), false);
      assert.equal(probe.body.length, 0);
      assert.equal((await pendingOf(h, h301.id)).length, 0);

      // A redirect to the metadata address is recorded, never followed.
      const rMeta = await rowOf(h, hMeta.id);
      assert.equal(rMeta.status, "success");
      assert.equal(rMeta.statusCode, 302);
      assert.equal(
        rMeta.redirectLocation,
        "http://169.254.169.254/latest/meta-data/",
      );
      assert.equal(rMeta.redirectStatusCode, null);
      assert.match(rMeta.errorMessage, /metadata/);

      const rReset = await rowOf(h, hReset.id);
      assert.equal(rReset.status, "failed");
      assert.equal(rReset.outcome, "error");
      assert.equal(rReset.statusCode, null);
      assert.match(rReset.errorMessage, /reset|closed/i);
      assert.equal((await pendingOf(h, hReset.id)).length, 1);

      const hook = async (id: string) =>
        (await h.request("GET", `/api/v2/webhooks/${id}`)).body.data;
      assert.equal((await hook(h301.id)).lastDeliveryStatus, "success");
      assert.equal((await hook(h500.id)).consecutiveFailures, 1);
      const count = (outcome: string) =>
        h.container.metrics.webhookDeliveries.get({ outcome, kind: "event" });
      assert.deepEqual(
        ["3xx", "4xx", "5xx", "error"].map(count),
        [2, 1, 1, 1],
      );
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  },
);

webhookTest(
  "a drip past 10 s, a black hole and a silent server all end at the 10 s deadline",
  async (h) => {
    const servers = await Promise.all(
      Array.from({ length: 3 }, () => startFaultServer()),
    );
    try {
      const [sDrip, sHole, sStall] = servers as [
        FaultServer,
        FaultServer,
        FaultServer,
      ];
      sDrip.script(drip(1, 60));
      sHole.script(blackhole());
      sStall.script(stall());
      const hooks = await subscribeAll(h, servers);
      await createContact(h, nextPhone());
      const started = performance.now();
      await h.deliver();
      const elapsed = performance.now() - started;
      // The three attempts run side by side: one deadline each, not three in a row.
      assert.ok(elapsed < 11_500, `all three took ${elapsed} ms`);
      for (const hook of hooks) {
        const row = await rowOf(h, hook.id);
        assert.equal(row.status, "failed");
        assert.equal(row.outcome, "timeout");
        assert.equal(row.statusCode, null);
        assert.ok(
          row.durationMs >= 9_990 && row.durationMs <= 10_400,
          `${hook.url}: ${row.durationMs} ms`,
        );
        assert.equal((await pendingOf(h, hook.id)).length, 1, "retried later");
      }
      assert.equal(
        h.container.metrics.webhookDeliveries.get({
          outcome: "timeout",
          kind: "event",
        }),
        3,
      );
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  },
);

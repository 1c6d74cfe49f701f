import assert from "node:assert/strict";
import type { ManualClock } from "../../src/clock.ts";
import {
  createAgent,
  createApiKey,
} from "../../src/domain/accounts/account_service.ts";
import { SCOPES } from "../../src/domain/accounts/scopes.ts";
import { createHarness, engineTest } from "../_harness.ts";
import { loadConfig } from "../../src/config.ts";
import { createContainer } from "../../src/container.ts";
import { createApp } from "../../src/http/app.ts";
import { createLogger } from "../../src/log.ts";

/** One GET in each route group of /api/v2 and /api/v1 (src/http/app.ts API_GROUPS, PANEL_GROUPS). */
const ONE_PER_GROUP = [
  "/api/v2/account",
  "/api/v2/channels",
  "/api/v2/contacts",
  "/api/v2/templates",
  `/api/v2/contacts/${crypto.randomUUID()}/conversations`,
  "/api/v2/conversations",
  `/api/v2/messages/${crypto.randomUUID()}`,
  `/api/v2/media/${crypto.randomUUID()}`,
  "/api/v2/webhooks",
  "/api/v2/events",
  "/api/v2/social/accounts",
  "/api/v1/webhook-subscriptions",
  "/api/v1/conversations/resolve?phone=%2B5491122334455",
];

engineTest(
  "a key limited to 5 a minute gets 5 requests through across every route group of /api/v2 and /api/v1, not 5 per group",
  async (h) => {
    const { key } = await createApiKey(h.container, {
      accountId: h.tenant.account.id,
      scopes: [...SCOPES],
      rateLimit: 5,
    });
    const statuses: number[] = [];
    for (const path of [...ONE_PER_GROUP, ...ONE_PER_GROUP]) {
      statuses.push((await h.request("GET", path, { key })).status);
    }
    const admitted = statuses.filter((s) => s !== 429);
    assert.equal(admitted.length, 5, statuses.join(" "));
    assert.deepEqual(statuses.slice(5), statuses.slice(5).map(() => 429));
  },
);

engineTest(
  "the bucket refills at limit/60 per second: a burst of the limit, then one request per 60/limit seconds, at most 2 x limit in any 60 s",
  async (h) => {
    const clock = h.clock as ManualClock;
    const { key } = await createApiKey(h.container, {
      accountId: h.tenant.account.id,
      scopes: [...SCOPES],
      rateLimit: 6,
    });
    const at: number[] = [];
    // A client that tries every second for three minutes.
    for (let second = 0; second < 180; second++) {
      for (;;) {
        const res = await h.request("GET", "/api/v2/account", { key });
        if (res.status === 429) break;
        at.push(second);
      }
      clock.advance(1_000);
    }
    assert.equal(at.filter((s) => s === 0).length, 6, "the burst is the limit");
    for (let start = 0; start + 60 <= 180; start++) {
      const inWindow = at.filter((s) => s >= start && s < start + 60).length;
      assert.ok(
        inWindow <= 12,
        `${inWindow} requests in [${start}, ${start + 60})`,
      );
    }
    // Past the burst, one every 10 s.
    assert.equal(at.filter((s) => s >= 60 && s < 120).length, 6);
  },
);

engineTest(
  "an agent's token has its own bucket of AGENT_RATE_LIMIT a minute, apart from the account's keys",
  async (h) => {
    const { token } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Ana",
      visibility: "all",
    });
    const path = "/api/v2/conversations";
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      statuses.push((await h.request("GET", path, { key: token })).status);
    }
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    const limited = await h.request(
      "GET",
      "/api/v1/conversations/resolve?phone=%2B5491122334455",
      { key: token },
    );
    assert.equal(limited.status, 429, "the same bucket under /api/v1");
    assert.equal(limited.headers.get("x-ratelimit-limit"), "3");
    const byKey = await h.request("GET", path);
    assert.equal(
      byKey.status,
      200,
      `the key is apart: ${JSON.stringify(byKey.body)}`,
    );
  },
  { env: { AGENT_RATE_LIMIT: "3" } },
);

Deno.test({
  name:
    "on libSQL, instances share one bucket per credential: a 5/min key gets 5 requests through over two instances, and each refusal after the first costs no statement",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createHarness({ engine: "libsql" });
    const other = createContainer(
      loadConfig({
        DATA_DIR: h.dir,
        DATABASE_URL: h.container.config.databaseUrl,
        SECRET_KEY: "test-secret-key-0123456789abcdef-0123456789",
        LOG_LEVEL: "silent",
      }),
      { clock: h.clock, log: createLogger("silent") },
    );
    await using _other = other;
    const apps = [h.app, createApp(other)];
    const { key } = await createApiKey(h.container, {
      accountId: h.tenant.account.id,
      scopes: [...SCOPES],
      rateLimit: 5,
    });
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await h.request("GET", "/api/v2/account", {
        key,
        app: apps[i % 2],
      });
      statuses.push(res.status);
    }
    assert.deepEqual(statuses, [
      ...Array(5).fill(200),
      ...Array(7).fill(429),
    ]);
    const clock = h.clock as ManualClock;
    clock.advance(12_000); // one token
    const again = await Promise.all(
      apps.map((app) => h.request("GET", "/api/v2/account", { key, app })),
    );
    assert.deepEqual(again.map((r) => r.status).sort(), [200, 429]);
  },
});

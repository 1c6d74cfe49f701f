// Credentials and the per-key rate limit, in front of every /api/v2 route.
import assert from "node:assert/strict";
import { createHarness } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import { SCOPES } from "../../src/domain/accounts/scopes.ts";
import {
  createApiKey,
  revokeApiKey,
} from "../../src/domain/accounts/account_service.ts";
import { API_PREFIX, assertErrorBody } from "./_routes.ts";

const ACCOUNT_URL = `${API_PREFIX}/account`;

Deno.test("requests without usable credentials get 401 UNAUTHORIZED", async () => {
  await using h = await createHarness();
  const { apiKey, key: revoked } = await createApiKey(h.container, {
    accountId: h.tenant.account.id,
    scopes: [...SCOPES],
  });
  await revokeApiKey(h.container, apiKey.id);
  const cases: [string, Record<string, string>][] = [
    ["no Authorization header", {}],
    ["Basic credentials", { authorization: "Basic x" }],
    ["Bearer with nothing", { authorization: "Bearer" }],
    ["Bearer with a space only", { authorization: "Bearer " }],
    ["two tokens", { authorization: `Bearer ${h.tenant.key} extra` }],
    ["a malformed token", { authorization: "Bearer not-a-key" }],
    ["a short bmk_ token", { authorization: "Bearer bmk_abc" }],
    ["an unknown well-formed key", {
      authorization: `Bearer bmk_${"A1b2C3d4E5".repeat(4)}`,
    }],
    ["an unknown well-formed user token", {
      authorization: `Bearer bmu_${"A1b2C3d4E5".repeat(4)}`,
    }],
    ["a revoked key", { authorization: `Bearer ${revoked}` }],
  ];
  for (const [what, headers] of cases) {
    const res = await h.request("GET", ACCOUNT_URL, { key: null, headers });
    assertErrorBody(res, 401, "UNAUTHORIZED", what);
    assert.equal("data" in res.body, false, what);
  }
  const ok = await h.request("GET", ACCOUNT_URL);
  assert.equal(ok.status, 200);
});

Deno.test("a key over its rate limit gets 429 RATE_LIMITED with Retry-After", async () => {
  await using h = await createHarness();
  const { key } = await createApiKey(h.container, {
    accountId: h.tenant.account.id,
    scopes: ["account:read"],
    rateLimit: 3,
  });
  for (const remaining of ["2", "1", "0"]) {
    const res = await h.request("GET", ACCOUNT_URL, { key });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("x-ratelimit-limit"), "3");
    assert.equal(res.headers.get("x-ratelimit-remaining"), remaining);
    assert.match(res.headers.get("x-ratelimit-reset") ?? "", /^\d+$/);
  }
  const limited = await h.request("GET", ACCOUNT_URL, { key });
  assertErrorBody(limited, 429, "RATE_LIMITED");
  const retryAfter = Number(limited.headers.get("retry-after"));
  assert.ok(Number.isInteger(retryAfter) && retryAfter > 0, "Retry-After");
  assert.equal(limited.headers.get("x-ratelimit-limit"), "3");
  assert.equal(limited.headers.get("x-ratelimit-remaining"), "0");
  const reset = Number(limited.headers.get("x-ratelimit-reset"));
  assert.ok(
    reset * 1000 > h.clock.now().getTime(),
    "X-RateLimit-Reset is ahead",
  );

  // Other keys, of this account or another, are unaffected.
  assert.equal((await h.request("GET", ACCOUNT_URL)).status, 200);
  const other = await h.makeTenant(`other-${crypto.randomUUID().slice(0, 8)}`);
  assert.equal(
    (await h.request("GET", ACCOUNT_URL, { key: other.key })).status,
    200,
  );

  // After Retry-After seconds the key has a token again.
  (h.clock as ManualClock).advance(retryAfter * 1000);
  assert.equal((await h.request("GET", ACCOUNT_URL, { key })).status, 200);
  assertErrorBody(
    await h.request("GET", ACCOUNT_URL, { key }),
    429,
    "RATE_LIMITED",
  );
});

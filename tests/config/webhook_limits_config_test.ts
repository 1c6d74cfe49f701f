// The webhook fairness limit: attempts in flight per account (a quarter of
// WEBHOOK_CONCURRENCY unless set).
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config.ts";

Deno.test("an account's webhook attempts in flight default to a quarter of WEBHOOK_CONCURRENCY", () => {
  const defaults = loadConfig({});
  assert.equal(defaults.webhookConcurrency, 64);
  assert.equal(defaults.webhookMaxInFlightPerAccount, 16);
  assert.equal(
    loadConfig({ WEBHOOK_CONCURRENCY: "10" }).webhookMaxInFlightPerAccount,
    2,
    "rounded down",
  );
  assert.equal(
    loadConfig({ WEBHOOK_CONCURRENCY: "3" }).webhookMaxInFlightPerAccount,
    1,
    "never 0",
  );
  const set = loadConfig({ WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: "40" });
  assert.equal(set.webhookMaxInFlightPerAccount, 40);
});

Deno.test("the per-account webhook limit is refused below 1, with its name", () => {
  assert.throws(
    () =>
      loadConfig({
        WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: "0",
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(
        err.message,
        [
          "Cannot load configuration:",
          "✖ Too small: expected number to be >=1",
          "  → at WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT",
        ].join("\n"),
      );
      return true;
    },
  );
});

// The webhook fairness limits: attempts in flight per account (a quarter of
// WEBHOOK_CONCURRENCY unless set) and subscriptions per account.
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config.ts";

Deno.test("an account's webhook attempts in flight default to a quarter of WEBHOOK_CONCURRENCY", () => {
  const defaults = loadConfig({});
  assert.equal(defaults.webhookConcurrency, 64);
  assert.equal(defaults.webhookMaxInFlightPerAccount, 16);
  assert.equal(defaults.webhookMaxSubscriptionsPerAccount, 25);
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
  const set = loadConfig({
    WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: "40",
    WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT: "100",
  });
  assert.equal(set.webhookMaxInFlightPerAccount, 40);
  assert.equal(set.webhookMaxSubscriptionsPerAccount, 100);
});

Deno.test("the webhook fairness limits are refused below 1, with their names", () => {
  assert.throws(
    () =>
      loadConfig({
        WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: "0",
        WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT: "2.5",
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(
        err.message,
        [
          "Cannot load configuration:",
          "✖ Too small: expected number to be >=1",
          "  → at WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT",
          "✖ Invalid input: expected int, received number",
          "  → at WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT",
        ].join("\n"),
      );
      return true;
    },
  );
});

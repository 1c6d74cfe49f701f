// The configuration issue 28 adds: TEMPLATE_SYNC_INTERVAL (a duration, 6 h
// by default), META_APP_ID (optional) and SEND_RATE_MAX (1,000).
import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config.ts";

Deno.test("TEMPLATE_SYNC_INTERVAL takes 6h, 30m, 900s or bare seconds; META_APP_ID and SEND_RATE_MAX their defaults", () => {
  const d = loadConfig({});
  assert.equal(d.templateSyncIntervalMs, 6 * 3_600_000);
  assert.equal(d.metaAppId, undefined);
  assert.equal(d.sendRateMax, 1_000);
  for (
    const [raw, ms] of [
      ["30m", 1_800_000],
      ["900s", 900_000],
      ["900", 900_000],
      ["1d", 86_400_000],
      ["1.5h", 5_400_000],
    ] as const
  ) {
    assert.equal(
      loadConfig({ TEMPLATE_SYNC_INTERVAL: raw }).templateSyncIntervalMs,
      ms,
      raw,
    );
  }
  const c = loadConfig({ META_APP_ID: "1234567890", SEND_RATE_MAX: "500" });
  assert.equal(c.metaAppId, "1234567890");
  assert.equal(c.sendRateMax, 500);
});

Deno.test("a TEMPLATE_SYNC_INTERVAL that is not a duration of a minute or more is refused, naming it", () => {
  for (const raw of ["6 hours", "-1h", "10s", "h", ""]) {
    assert.throws(
      () => loadConfig({ TEMPLATE_SYNC_INTERVAL: raw }),
      (err: unknown) =>
        err instanceof ConfigError &&
        err.message.includes("at TEMPLATE_SYNC_INTERVAL") &&
        err.message.includes("duration of at least a minute"),
      raw,
    );
  }
  assert.throws(
    () => loadConfig({ SEND_RATE_MAX: "0" }),
    /Too small: expected number to be >0\n {2}→ at SEND_RATE_MAX/,
  );
});

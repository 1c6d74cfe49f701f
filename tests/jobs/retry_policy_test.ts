import assert from "node:assert/strict";
import {
  backoffMs,
  MAX_BACKOFF_MS,
  WEBHOOK_MAX_ATTEMPTS,
  WEBHOOK_SCHEDULE_MS,
  webhookRetryDelayMs,
} from "../../src/jobs/retry_policy.ts";

const MIDDLE = () => 0.5; // no jitter
const LOWEST = () => 0;
const HIGHEST = () => 0.999999;

Deno.test("backoffMs() doubles per attempt from 2 s", () => {
  assert.deepEqual(
    [1, 2, 3, 4, 10].map((a) => backoffMs(a, MIDDLE)),
    [2_000, 4_000, 8_000, 16_000, 1_024_000],
  );
});

Deno.test("backoffMs() stops growing at one hour", () => {
  assert.equal(backoffMs(12, MIDDLE), MAX_BACKOFF_MS);
  assert.equal(backoffMs(1_000, MIDDLE), MAX_BACKOFF_MS);
  assert.equal(MAX_BACKOFF_MS, 3_600_000);
});

Deno.test("backoffMs() jitters by at most 20 percent", () => {
  assert.equal(backoffMs(3, LOWEST), 6_400);
  assert.equal(backoffMs(3, HIGHEST), 9_600);
  for (let i = 0; i < 200; i++) {
    const ms = backoffMs(5);
    assert.ok(ms >= 25_600 && ms <= 38_400, `${ms}`);
  }
});

Deno.test("WEBHOOK_SCHEDULE_MS matches the design's delivery schedule", () => {
  const H = 3_600_000;
  assert.deepEqual(WEBHOOK_SCHEDULE_MS, [
    0,
    5_000,
    300_000,
    1_800_000,
    2 * H,
    5 * H,
    10 * H,
    14 * H,
    20 * H,
    24 * H,
  ]);
  assert.equal(WEBHOOK_MAX_ATTEMPTS, 10);
});

Deno.test("webhookRetryDelayMs() gives the wait after each failed attempt", () => {
  assert.deepEqual(
    [1, 2, 3, 9].map((a) => webhookRetryDelayMs(a, MIDDLE)),
    [5_000, 300_000, 1_800_000, 86_400_000],
  );
  assert.equal(webhookRetryDelayMs(15, MIDDLE), 86_400_000);
  assert.equal(webhookRetryDelayMs(2, LOWEST), 240_000);
  assert.equal(webhookRetryDelayMs(2, HIGHEST), 360_000);
});

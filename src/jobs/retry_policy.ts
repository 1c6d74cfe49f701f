/** Pure retry delays: exponential backoff for jobs, the fixed schedule for webhook deliveries (DESIGN.md §3). */

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/** Longest delay backoffMs() returns before jitter. */
export const MAX_BACKOFF_MS = HOUR;

/** Jitter is ±20 % so that jobs that failed together do not retry together. */
export const JITTER = 0.2;

/**
 * Delay attempts at 0, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h:
 * entry `n` is the wait before attempt `n + 1`, so entry 0 is the first, immediate, attempt.
 */
export const WEBHOOK_SCHEDULE_MS: readonly number[] = [
  0,
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
];

/** A webhook job with this many attempts has used the whole schedule. */
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_SCHEDULE_MS.length;

function jitter(ms: number, random: () => number): number {
  return Math.round(ms * (1 + (random() * 2 - 1) * JITTER));
}

/**
 * Returns the wait after failed attempt `attempt` (1-based): min(2^attempt s, 1 h) ±20 %.
 * `random` returns [0, 1) like Math.random; tests pass a constant.
 */
export function backoffMs(
  attempt: number,
  random: () => number = Math.random,
): number {
  const exponent = Math.max(0, Math.min(attempt, 32));
  return jitter(Math.min(2 ** exponent * SECOND, MAX_BACKOFF_MS), random);
}

/**
 * Returns the wait after failed webhook attempt `attempt` (1-based) before the next one,
 * from WEBHOOK_SCHEDULE_MS with ±20 % jitter. Past the schedule the last delay repeats;
 * enqueue webhook jobs with `maxAttempts: WEBHOOK_MAX_ATTEMPTS` to stop there.
 */
export function webhookRetryDelayMs(
  attempt: number,
  random: () => number = Math.random,
): number {
  const last = WEBHOOK_SCHEDULE_MS.length - 1;
  const index = Math.max(1, Math.min(Math.floor(attempt), last));
  return jitter(WEBHOOK_SCHEDULE_MS[index]!, random);
}

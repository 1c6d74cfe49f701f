/**
 * A credential's request bucket as GCRA (the generic cell rate algorithm):
 * one number per credential, the theoretical arrival time (TAT), instead of
 * a token count and its refill time. With limit L per minute, the emission
 * interval is T = 60 s / L and a request at `now` is admitted when
 * TAT - now <= (L - 1) T; it then moves TAT to max(TAT, now) + T. That is
 * exactly a token bucket of capacity L refilled at L/60 per second: at most
 * L requests in a burst, at most 2 L in any 60 s window. One number fits one
 * conditional statement when the bucket lives in the database.
 */
export interface Gcra {
  /** Emission interval, ms. */
  intervalMs: number;
  /** How far TAT may run ahead of now for a request to be admitted, ms. */
  toleranceMs: number;
}

export function gcra(limitPerMinute: number): Gcra {
  const intervalMs = 60_000 / limitPerMinute;
  return { intervalMs, toleranceMs: (limitPerMinute - 1) * intervalMs };
}

/** The TAT after admitting a request at `nowMs`, or null when it is refused. */
export function admitAt(
  rule: Gcra,
  tatMs: number | undefined,
  nowMs: number,
): number | null {
  const tat = Math.max(tatMs ?? nowMs, nowMs);
  return tat - nowMs <= rule.toleranceMs + 1e-6 ? tat + rule.intervalMs : null;
}

/** What the rate-limit headers say after a decision. */
export interface BucketState {
  admitted: boolean;
  /** Requests left now. */
  remaining: number;
  /** When the bucket is full again (ms since the epoch). */
  fullAtMs: number;
  /** Refused: when the next request may go, ms from now. */
  retryAfterMs: number;
}

/** The headers' view of a bucket whose TAT is `tatMs` at `nowMs`. */
export function bucketState(
  rule: Gcra,
  limit: number,
  admitted: boolean,
  tatMs: number,
  nowMs: number,
): BucketState {
  const ahead = Math.max(0, tatMs - nowMs);
  return {
    admitted,
    remaining: Math.max(
      0,
      Math.min(
        limit,
        Math.floor((limit * rule.intervalMs - ahead) / rule.intervalMs + 1e-9),
      ),
    ),
    fullAtMs: nowMs + ahead,
    retryAfterMs: Math.max(0, ahead - rule.toleranceMs),
  };
}

/** Where the buckets live: this process's memory, or the database (several instances). */
export interface RateBuckets {
  /** Admits or refuses one request of `key` with `limit` requests per minute. */
  take(key: string, limit: number, nowMs: number): Promise<BucketState>;
}

/** Buckets in memory: exact for one process (embedded SQLite). */
export class MemoryRateBuckets implements RateBuckets {
  readonly #tats = new Map<string, number>();
  readonly #max: number;

  constructor(options: { maxKeys?: number } = {}) {
    this.#max = options.maxKeys ?? 100_000;
  }

  take(key: string, limit: number, nowMs: number): Promise<BucketState> {
    const rule = gcra(limit);
    const tat = this.#tats.get(key);
    const next = admitAt(rule, tat, nowMs);
    if (next !== null) {
      // Only authenticated credentials get here, so this bound is never an attacker's.
      if (tat === undefined && this.#tats.size >= this.#max) this.#tats.clear();
      this.#tats.set(key, next);
    }
    return Promise.resolve(
      bucketState(rule, limit, next !== null, next ?? tat ?? nowMs, nowMs),
    );
  }
}

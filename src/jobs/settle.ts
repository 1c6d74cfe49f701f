/** What happens to a claimed job once its handler returned or threw. */
import { AppError, coerceError } from "../errors.ts";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { Executor } from "../db/schema.ts";
import { addMs } from "../db/time.ts";
import { complete, fail, type JobRow, release } from "./queue.ts";

/** Thrown by a handler to run the job again after `delayMs` without counting an attempt. */
export class Snooze extends Error {
  override readonly name = "Snooze";
  constructor(readonly delayMs: number, reason?: string) {
    super(reason ?? `Snoozed for ${delayMs} ms`);
  }
}

export type Outcome =
  | { type: "complete" }
  | { type: "snooze"; delayMs: number }
  | { type: "fail"; error: string; retryable: boolean; retryAfterMs?: number };

const SETTLE_TRIES = 4;
const SETTLE_BACKOFF_MS = 100;

function finite(ms: number | undefined): number | undefined {
  return ms !== undefined && Number.isFinite(ms) ? Math.max(0, ms) : undefined;
}

function describe(err: unknown): string {
  try {
    const e = coerceError(err);
    return `${e.name}: ${e.message}`;
  } catch {
    return "Error: the handler threw a value that cannot be described";
  }
}

/**
 * Maps what a handler threw to an outcome: Snooze re-runs later, an AppError keeps its
 * `retryable` and `retryAfterMs`, anything else is treated as retryable.
 */
export function classify(err: unknown): Outcome {
  try {
    if (err instanceof Snooze) {
      return { type: "snooze", delayMs: finite(err.delayMs) ?? 0 };
    }
    if (err instanceof AppError) {
      const out: Outcome = {
        type: "fail",
        error: `${err.code}: ${err.message}`,
        retryable: err.retryable,
      };
      const after = finite(err.retryAfterMs);
      return after === undefined ? out : { ...out, retryAfterMs: after };
    }
  } catch { /* a hostile thrown value: treat it as an unknown error */ }
  return { type: "fail", error: describe(err), retryable: true };
}

export interface SettleDeps {
  db: Executor;
  clock: Clock;
  log: Logger;
}

async function apply(
  deps: SettleDeps,
  job: JobRow,
  outcome: Outcome,
): Promise<void> {
  const { db, log } = deps;
  const now = deps.clock.now();
  if (outcome.type === "complete") {
    if (!await complete(db, job, now)) {
      log.warn("Job finished after its lease was lost");
    }
  } else if (outcome.type === "snooze") {
    await release(db, job, { runAt: addMs(now, outcome.delayMs), now });
    log.debug("Job snoozed", { delayMs: outcome.delayMs });
  } else {
    const state = await fail(db, job, {
      error: outcome.error,
      retryable: outcome.retryable,
      now,
      ...(outcome.retryAfterMs === undefined
        ? {}
        : { retryAt: addMs(now, outcome.retryAfterMs) }),
    });
    const fields = { error: outcome.error, state };
    if (state === "discarded") log.error("Job failed for good", fields);
    else log.warn("Job failed", fields);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Writes the outcome with complete(), fail() or release(), trying again on database errors.
 * If the database stays down it gives up and logs: the lease then expires and
 * rescueExpiredLeases() hands the job back, so nothing is lost.
 */
export async function settle(
  deps: SettleDeps,
  { job, outcome }: { job: JobRow; outcome: Outcome },
): Promise<void> {
  for (let attempt = 1;; attempt++) {
    try {
      await apply(deps, job, outcome);
      return;
    } catch (err) {
      if (attempt >= SETTLE_TRIES) {
        deps.log.error(
          "Cannot settle job; it runs again once its lease expires",
          { err },
        );
        return;
      }
      deps.log.warn("Cannot settle job; trying again", { err });
      await delay(SETTLE_BACKOFF_MS * 2 ** attempt);
    }
  }
}

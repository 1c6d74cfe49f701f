import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import type { Clock } from "../clock.ts";
import type { Principal } from "../domain/accounts/account.ts";
import type { AppEnv } from "./env.ts";

interface Bucket {
  tokens: number;
  updatedMs: number;
}

const MAX_BUCKETS = 100_000;

/** The bucket a principal draws from: its API key, or its agent (every token and session of it). */
function bucketKey(principal: Principal): string {
  return principal.kind === "key"
    ? `key:${principal.keyId}`
    : `agent:${principal.agentId}`;
}

/**
 * One token bucket per credential for the whole process, shared by every
 * route of /api/v2 and /api/v1: capacity = the limit, refilled at
 * limit / 60 per second. So a credential gets at most `limit` requests in
 * a burst and at most 2 × limit in any 60 s window. Kept in memory: each
 * instance counts on its own.
 */
export class RateLimiter {
  readonly #clock: Clock;
  readonly #agentLimit: number;
  readonly #buckets = new Map<string, Bucket>();

  /** `agentLimit`: requests per minute of each agent (AGENT_RATE_LIMIT); a key has its own. */
  constructor(clock: Clock, options: { agentLimit: number }) {
    this.#clock = clock;
    this.#agentLimit = options.agentLimit;
  }

  /** The middleware; every route group mounts the same one. */
  middleware(): MiddlewareHandler<AppEnv> {
    return async (c, next) => {
      const principal = c.get("principal");
      const limit = principal.kind === "key"
        ? principal.rateLimit
        : this.#agentLimit;
      const perMs = limit / 60_000;
      const nowMs = this.#clock.now().getTime();
      const bucket = this.#bucket(bucketKey(principal), limit, nowMs);
      bucket.tokens = Math.min(
        limit,
        bucket.tokens + (nowMs - bucket.updatedMs) * perMs,
      );
      bucket.updatedMs = nowMs;
      c.header("X-RateLimit-Limit", String(limit));
      if (bucket.tokens < 1) {
        const waitMs = (1 - bucket.tokens) / perMs;
        c.header("X-RateLimit-Remaining", "0");
        c.header(
          "X-RateLimit-Reset",
          String(Math.ceil((nowMs + (limit - bucket.tokens) / perMs) / 1000)),
        );
        throw new AppError(
          "RATE_LIMITED",
          `Rate limit of ${limit} requests per minute reached: retry in ${
            Math.ceil(waitMs / 1000)
          } s`,
          { retryAfterMs: waitMs },
        );
      }
      bucket.tokens -= 1;
      c.header("X-RateLimit-Remaining", String(Math.floor(bucket.tokens)));
      c.header(
        "X-RateLimit-Reset",
        String(Math.ceil((nowMs + (limit - bucket.tokens) / perMs) / 1000)),
      );
      await next();
    };
  }

  #bucket(key: string, limit: number, nowMs: number): Bucket {
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      // Only authenticated credentials get here, so this bound is never an attacker's.
      if (this.#buckets.size >= MAX_BUCKETS) this.#buckets.clear();
      bucket = { tokens: limit, updatedMs: nowMs };
      this.#buckets.set(key, bucket);
    }
    return bucket;
  }
}

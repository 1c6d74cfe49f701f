import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import type { Clock } from "../clock.ts";
import type { Principal } from "../domain/accounts/account.ts";
import type { RateBuckets } from "../domain/accounts/rate_limit.ts";
import type { AppEnv } from "./env.ts";

/** The bucket a principal draws from: its API key, or its agent (every token and session of it). */
function bucketKey(principal: Principal): string {
  return principal.kind === "key"
    ? `key:${principal.keyId}`
    : `agent:${principal.agentId}`;
}

/**
 * One token bucket per credential, shared by every route of /api/v2 and
 * /api/v1: capacity = the limit, refilled at limit / 60 per second. So a
 * credential gets at most `limit` requests in a burst and at most 2 × limit
 * in any 60 s window. The buckets live where `buckets` keeps them: this
 * process's memory (embedded SQLite), or the database, shared by every
 * instance (libSQL).
 */
export class RateLimiter {
  readonly #clock: Clock;
  readonly #agentLimit: number;
  readonly #buckets: RateBuckets;

  /** `agentLimit`: requests per minute of each agent (AGENT_RATE_LIMIT); a key has its own. */
  constructor(
    clock: Clock,
    options: { agentLimit: number; buckets: RateBuckets },
  ) {
    this.#clock = clock;
    this.#agentLimit = options.agentLimit;
    this.#buckets = options.buckets;
  }

  /** The middleware; every route group mounts the same one. */
  middleware(): MiddlewareHandler<AppEnv> {
    return async (c, next) => {
      const principal = c.get("principal");
      const limit = principal.kind === "key"
        ? principal.rateLimit
        : this.#agentLimit;
      const nowMs = this.#clock.now().getTime();
      const state = await this.#buckets.take(
        bucketKey(principal),
        limit,
        nowMs,
      );
      c.header("X-RateLimit-Limit", String(limit));
      c.header("X-RateLimit-Remaining", String(state.remaining));
      c.header("X-RateLimit-Reset", String(Math.ceil(state.fullAtMs / 1000)));
      if (!state.admitted) {
        throw new AppError(
          "RATE_LIMITED",
          `Rate limit of ${limit} requests per minute reached: retry in ${
            Math.ceil(state.retryAfterMs / 1000)
          } s`,
          { retryAfterMs: state.retryAfterMs },
        );
      }
      await next();
    };
  }
}

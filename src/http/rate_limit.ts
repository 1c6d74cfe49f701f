import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import type { Clock } from "../clock.ts";
import type { AppEnv } from "./env.ts";

interface Bucket {
  tokens: number;
  updatedMs: number;
}

const MAX_BUCKETS = 100_000;

/**
 * Per-credential token bucket: `limit` requests per minute, refilled
 * continuously. Kept in memory: each instance enforces its own quota.
 */
export function rateLimit(clock: Clock): MiddlewareHandler<AppEnv> {
  const buckets = new Map<string, Bucket>();
  return async (c, next) => {
    const principal = c.get("principal");
    const id = principal.kind === "key" ? principal.keyId : principal.agentId;
    const limit = principal.rateLimit;
    const perMs = limit / 60_000;
    const nowMs = clock.now().getTime();
    let bucket = buckets.get(id);
    if (!bucket) {
      if (buckets.size >= MAX_BUCKETS) buckets.clear();
      bucket = { tokens: limit, updatedMs: nowMs };
      buckets.set(id, bucket);
    }
    bucket.tokens = Math.min(
      limit,
      bucket.tokens + (nowMs - bucket.updatedMs) * perMs,
    );
    bucket.updatedMs = nowMs;
    const fullInMs = (limit - bucket.tokens) / perMs;
    c.header("X-RateLimit-Limit", String(limit));
    if (bucket.tokens < 1) {
      const waitMs = (1 - bucket.tokens) / perMs;
      c.header("X-RateLimit-Remaining", "0");
      c.header(
        "X-RateLimit-Reset",
        String(Math.ceil((nowMs + fullInMs) / 1000)),
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

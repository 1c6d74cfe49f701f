import type { Db } from "../../db/schema.ts";
import {
  type BucketState,
  bucketState,
  gcra,
  type RateBuckets,
} from "./rate_limit.ts";
import { readRateBucket, takeRateBucket } from "./rate_bucket_repo.ts";

/**
 * Buckets in the database, shared by every instance on one libSQL server:
 * one conditional statement per admitted request, exact across instances.
 * A refused credential is remembered until its next token is due, so the
 * refusals of a client that keeps knocking cost no statement at all (and
 * never a write).
 */
export class DbRateBuckets implements RateBuckets {
  readonly #db: Db;
  /** Refused keys: when each may try the database again (ms since the epoch). */
  readonly #deniedUntil = new Map<string, { untilMs: number; tatMs: number }>();

  constructor(db: Db) {
    this.#db = db;
  }

  /** Admits or refuses one request of `key`; see the class. */
  async take(key: string, limit: number, nowMs: number): Promise<BucketState> {
    const rule = gcra(limit);
    const denied = this.#deniedUntil.get(key);
    if (denied && nowMs < denied.untilMs) {
      return bucketState(rule, limit, false, denied.tatMs, nowMs);
    }
    this.#deniedUntil.delete(key);
    const tat = await takeRateBucket(this.#db, key, { ...rule, nowMs });
    if (tat !== null) return bucketState(rule, limit, true, tat, nowMs);
    const current = await readRateBucket(this.#db, key) ?? nowMs;
    const state = bucketState(rule, limit, false, current, nowMs);
    if (this.#deniedUntil.size >= 10_000) this.#deniedUntil.clear();
    this.#deniedUntil.set(key, {
      untilMs: nowMs + state.retryAfterMs,
      tatMs: current,
    });
    return state;
  }
}

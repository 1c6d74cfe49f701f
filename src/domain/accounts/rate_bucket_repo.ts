import { sql } from "kysely";
import type { Executor } from "../../db/schema.ts";

/**
 * Admits one request in one statement: inserts the bucket, or moves its TAT
 * by `intervalMs` when TAT - now <= `toleranceMs`; the new TAT, or null
 * when the request is refused (the row is left as it was).
 */
export async function takeRateBucket(
  db: Executor,
  key: string,
  rule: { intervalMs: number; toleranceMs: number; nowMs: number },
): Promise<number | null> {
  const { intervalMs, toleranceMs, nowMs } = rule;
  const row = await sql<{ tat_ms: number }>`
    insert into rate_buckets (key, tat_ms) values (${key}, ${
    nowMs + intervalMs
  })
    on conflict (key) do update
      set tat_ms = max(rate_buckets.tat_ms, ${nowMs}) + ${intervalMs}
      where max(rate_buckets.tat_ms, ${nowMs}) - ${nowMs} <= ${toleranceMs}
    returning tat_ms`.execute(db);
  return row.rows[0]?.tat_ms ?? null;
}

/** A bucket's TAT, or undefined when it has none. */
export async function readRateBucket(
  db: Executor,
  key: string,
): Promise<number | undefined> {
  const row = await db.selectFrom("rate_buckets").select("tat_ms")
    .where("key", "=", key).executeTakeFirst();
  return row?.tat_ms;
}

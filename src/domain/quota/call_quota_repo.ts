/**
 * A durable hourly budget of upstream calls, kept on the row of what the
 * calls are made for (a social account, a WABA: both tables have the
 * columns quota_window_start, quota_used and blocked_until), so a restart
 * neither resets it nor forgets an upstream block.
 */
import { sql } from "kysely";
import type { Executor } from "../../db/schema.ts";

/** The tables that carry a call budget. */
export type QuotaTable = "social_accounts" | "wabas";

// Both tables have the three columns; Kysely is told one of them to type the statements.
type Typed = "social_accounts";

/**
 * Takes one upstream call of the hour window `window` when fewer than `cap`
 * were taken in it and no upstream block is running; one statement, so two
 * workers can never both take the last call.
 */
export async function takeQuotaCall(
  db: Executor,
  table: QuotaTable,
  id: string,
  input: { window: string; cap: number; now: string },
): Promise<boolean> {
  const r = await db.updateTable(table as Typed).set({
    quota_used: sql<number>`case when quota_window_start = ${input.window}
      then quota_used + 1 else 1 end`,
    quota_window_start: input.window,
  }).where("id", "=", id)
    .where(sql<boolean>`(quota_window_start is not ${input.window}
      or quota_used < ${input.cap})`)
    .where((eb) =>
      eb.or([
        eb("blocked_until", "is", null),
        eb("blocked_until", "<=", input.now),
      ])
    )
    .returning("id").executeTakeFirst();
  return r !== undefined;
}

export async function readQuota(
  db: Executor,
  table: QuotaTable,
  id: string,
): Promise<
  { window: string | null; used: number; blockedUntil: string | null }
> {
  const r = await db.selectFrom(table as Typed)
    .select(["quota_window_start", "quota_used", "blocked_until"])
    .where("id", "=", id).executeTakeFirstOrThrow();
  return {
    window: r.quota_window_start,
    used: r.quota_used,
    blockedUntil: r.blocked_until,
  };
}

/** Records an upstream block (throttling error or usage at 100 %) until `until`, never shortening one. */
export async function blockQuota(
  db: Executor,
  table: QuotaTable,
  id: string,
  until: string,
): Promise<void> {
  await db.updateTable(table as Typed).set({ blocked_until: until })
    .where("id", "=", id)
    .where((eb) =>
      eb.or([eb("blocked_until", "is", null), eb("blocked_until", "<", until)])
    )
    .execute();
}

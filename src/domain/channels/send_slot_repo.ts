import { sql } from "kysely";
import type { Executor } from "../../db/schema.ts";

/**
 * Reserves `count` slots `intervalMs` apart for a channel in one statement,
 * on the database's clock: from the later of its next free slot and now.
 * The first slot's time and the database's now, both in ms.
 */
export async function reserveSendSlots(
  db: Executor,
  channelId: string,
  span: { count: number; intervalMs: number },
): Promise<{ startMs: number; dbNowMs: number }> {
  const spanMs = span.count * span.intervalMs;
  const { rows } = await sql<{ start_ms: number; db_now_ms: number }>`
    insert into send_slots (channel_id, next_ms)
      values (${channelId}, unixepoch('subsec') * 1000 + ${spanMs})
    on conflict (channel_id) do update set next_ms =
      max(send_slots.next_ms, unixepoch('subsec') * 1000) + ${spanMs}
    returning next_ms - ${spanMs} as start_ms,
      unixepoch('subsec') * 1000 as db_now_ms`.execute(db);
  const row = rows[0]!;
  return { startMs: Number(row.start_ms), dbNowMs: Number(row.db_now_ms) };
}

/** No slot of the channel before `untilMs` (database clock). */
export async function pauseSendSlots(
  db: Executor,
  channelId: string,
  untilMs: number,
): Promise<void> {
  await sql`insert into send_slots (channel_id, next_ms)
      values (${channelId}, ${untilMs})
    on conflict (channel_id) do update
      set next_ms = max(send_slots.next_ms, ${untilMs})`.execute(db);
}

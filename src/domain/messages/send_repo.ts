import { CompiledQuery } from "kysely";
import type { Executor } from "../../db/schema.ts";
import { executeRaw } from "../../db/raw.ts";

const TOUCH_CONTACT_SQL =
  "update contacts set last_message_at = ?, updated_at = ? where id = ?";

/** Keeps Contact.lastMessageAt current for both directions (precompiled: every send runs it). */
export async function touchContactLastMessage(
  db: Executor,
  contactId: string,
  at: string,
): Promise<void> {
  await executeRaw(db, TOUCH_CONTACT_SQL, [at, at, contactId]);
}

const TOUCH_CONTACTS_SQL = `update contacts set last_message_at = ?,
  updated_at = ? where id in (select value from json_each(?))`;

/** touchContactLastMessage() of many contacts in one statement. */
export async function touchContactsLastMessage(
  db: Executor,
  contactIds: readonly string[],
  at: string,
): Promise<void> {
  if (contactIds.length === 0) return;
  await db.executeQuery(
    CompiledQuery.raw(TOUCH_CONTACTS_SQL, [
      at,
      at,
      JSON.stringify(contactIds),
    ]),
  );
}

const QUEUED_BATCH_SQL =
  "select queued from channel_batch_backlog where channel_id = ?";

/**
 * How many batch sends of a channel are still waiting to go out: one row,
 * kept by triggers on messages (migration 0010), not a count over the backlog.
 */
export async function countQueuedBatch(
  db: Executor,
  channelId: string,
): Promise<number> {
  const { rows } = await db.executeQuery<{ queued: number }>(
    CompiledQuery.raw(QUEUED_BATCH_SQL, [channelId]),
  );
  return Number(rows[0]?.queued ?? 0);
}

const ADD_QUEUED_BATCH_SQL = `insert into channel_batch_backlog
  (channel_id, queued) values (?, ?)
  on conflict (channel_id) do update set queued = queued + excluded.queued`;

/** Counts `n` more batch sends waiting on a channel (insertMessages() calls it). */
export async function addQueuedBatch(
  db: Executor,
  channelId: string,
  n: number,
): Promise<void> {
  await db.executeQuery(
    CompiledQuery.raw(ADD_QUEUED_BATCH_SQL, [channelId, n]),
  );
}

import type { Executor } from "../../db/schema.ts";

/** Keeps Contact.lastMessageAt current for both directions. */
export async function touchContactLastMessage(
  db: Executor,
  contactId: string,
  at: string,
): Promise<void> {
  await db.updateTable("contacts").set({ last_message_at: at, updated_at: at })
    .where("id", "=", contactId).execute();
}

/** How many batch sends of a channel are still waiting to go out. */
export async function countQueuedBatch(
  db: Executor,
  channelId: string,
): Promise<number> {
  const row = await db.selectFrom("messages")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("channel_id", "=", channelId)
    .where("lane", "=", "batch")
    .where("status", "=", "queued")
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

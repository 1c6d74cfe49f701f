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

/** Management webhook changes (meta_events): stored as received, once per (WABA, field, value). */
import type { Executor, MetaEventsTable } from "../../db/schema.ts";

/** Stores a change unless the same one was stored before; false for a duplicate. */
export async function insertMetaEvent(
  db: Executor,
  row: MetaEventsTable,
): Promise<boolean> {
  const r = await db.insertInto("meta_events").values(row)
    .onConflict((oc) => oc.column("dedupe_key").doNothing())
    .returning("id").executeTakeFirst();
  return r !== undefined;
}

/** Records what applying a stored change did. */
export async function setMetaEventOutcome(
  db: Executor,
  id: string,
  input: {
    outcome: string;
    note: string | null;
    subject: string | null;
    event: string | null;
  },
): Promise<void> {
  await db.updateTable("meta_events").set(input).where("id", "=", id)
    .execute();
}

/** The latest changes of a WABA, newest first (doctor, tests). */
export async function listMetaEvents(
  db: Executor,
  wabaId: string,
  limit = 50,
): Promise<MetaEventsTable[]> {
  return await db.selectFrom("meta_events").selectAll()
    .where("waba_id", "=", wabaId)
    .orderBy("received_at", "desc").orderBy("id", "desc").limit(limit)
    .execute();
}

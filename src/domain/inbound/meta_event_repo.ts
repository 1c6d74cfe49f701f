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

/** Whether a change with this dedupe key is stored (a duplicate of Meta's). */
export async function hasMetaEvent(
  db: Executor,
  dedupeKey: string,
): Promise<boolean> {
  const r = await db.selectFrom("meta_events").select("id")
    .where("dedupe_key", "=", dedupeKey).executeTakeFirst();
  return r !== undefined;
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

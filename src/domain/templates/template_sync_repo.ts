/** SQL of the template sync: a WABA's rows, the hand-made ones a sync takes over, and the writes. */
import { type RawBuilder, sql } from "kysely";
import type { Executor, TemplatesTable } from "../../db/schema.ts";
import { rowUnchanged, sameCount, sameRow } from "../../db/row_guard.ts";

/** Every template row of a WABA (removed ones included). */
export async function listWabaTemplateRows(
  db: Executor,
  wabaId: string,
): Promise<TemplatesTable[]> {
  return await db.selectFrom("templates").selectAll()
    .where("waba_id", "=", wabaId).execute();
}

/**
 * The hand-made templates a sync of the WABA replaces: the account's local
 * ones that are global or belong to one of its channels, oldest first.
 */
export async function listReplaceableRows(
  db: Executor,
  input: { accountId: string; wabaId: string },
): Promise<TemplatesTable[]> {
  return await db.selectFrom("templates").selectAll()
    .where("account_id", "=", input.accountId)
    .where("waba_id", "is", null)
    .where((eb) =>
      eb.or([
        eb("channel_id", "is", null),
        eb(
          "channel_id",
          "in",
          eb.selectFrom("channels").select("id")
            .where("waba_id", "=", input.wabaId),
        ),
      ])
    )
    .orderBy("created_at").orderBy("id").execute();
}

/** A guard (PlannedWrites.expectRow): the template row is still as read. */
export function sameTemplateRow(row: TemplatesTable): RawBuilder<unknown> {
  return sameRow("templates", { ...row });
}

/** A guard: the WABA still has `count` template rows (none are deleted: the same ones). */
export function sameWabaTemplateCount(
  wabaId: string,
  count: number,
): RawBuilder<unknown> {
  return sameCount("templates", { waba_id: wabaId }, count);
}

export async function insertTemplateRow(
  db: Executor,
  row: TemplatesTable,
): Promise<void> {
  await db.insertInto("templates").values(row).execute();
}

export async function updateTemplateRow(
  db: Executor,
  id: string,
  patch: Partial<Omit<TemplatesTable, "id" | "account_id" | "created_at">>,
): Promise<void> {
  await db.updateTable("templates").set(patch).where("id", "=", id).execute();
}

/** Stamps the templates a sync saw unchanged with its time, in one statement. */
export async function markSeen(
  db: Executor,
  input: { wabaId: string; ids: string[]; at: string },
): Promise<void> {
  if (input.ids.length === 0) return;
  await db.updateTable("templates").set({ synced_at: input.at })
    .where("waba_id", "=", input.wabaId)
    .where(
      "id",
      "in",
      sql<string>`(select value from json_each(${JSON.stringify(input.ids)}))`,
    )
    .execute();
}

/** A template of a WABA by Meta's id. */
export async function findByMetaId(
  db: Executor,
  input: { wabaId: string; metaTemplateId: string },
): Promise<TemplatesTable | undefined> {
  return await db.selectFrom("templates").selectAll()
    .where("waba_id", "=", input.wabaId)
    .where("meta_template_id", "=", input.metaTemplateId)
    .executeTakeFirst();
}

/** A template of a WABA by name and language. */
export async function findByKey(
  db: Executor,
  input: { wabaId: string; name: string; language: string },
): Promise<TemplatesTable | undefined> {
  return await db.selectFrom("templates").selectAll()
    .where("waba_id", "=", input.wabaId)
    .where("name", "=", input.name)
    .where("language", "=", input.language)
    .executeTakeFirst();
}

/**
 * Marks a refresh requested unless one was in the last `windowMs`; true
 * when this call took it (one statement: two failing sends never both do).
 */
/** When a refresh of the template was last requested (takeRefreshRequest). */
export async function refreshRequestedAt(
  db: Executor,
  id: string,
): Promise<string | null> {
  const row = await db.selectFrom("templates").select("refresh_requested_at")
    .where("id", "=", id).executeTakeFirst();
  return row?.refresh_requested_at ?? null;
}

/** A guard that the template's last refresh request is still `at`. */
export function refreshRequestUnchanged(id: string, at: string | null) {
  return rowUnchanged("templates", { id, refresh_requested_at: at });
}

export async function takeRefreshRequest(
  db: Executor,
  input: { id: string; now: string; since: string },
): Promise<boolean> {
  const r = await db.updateTable("templates")
    .set({ refresh_requested_at: input.now })
    .where("id", "=", input.id)
    .where((eb) =>
      eb.or([
        eb("refresh_requested_at", "is", null),
        eb("refresh_requested_at", "<=", input.since),
      ])
    )
    .returning("id").executeTakeFirst();
  return r !== undefined;
}

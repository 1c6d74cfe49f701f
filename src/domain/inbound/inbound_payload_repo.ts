/** Stored Meta webhook bodies (inbound_payloads): kept as received, processed later or at once. */
import { sql } from "kysely";
import { deleteInBatches } from "../../db/prune.ts";
import type { Executor } from "../../db/schema.ts";
import { insertRow } from "../../db/prepared.ts";
import { insertRows } from "../../db/bulk.ts";

export interface StoredPayload {
  id: string;
  body: string;
  /** Database time (ISO 8601 UTC with ms). */
  receivedAt: string;
}

/** A payload to store; `processedAt` is set when nothing is left to do with it. */
export type NewInboundPayload = StoredPayload & {
  processedAt: string | null;
  error: string | null;
};

function payloadRow(p: NewInboundPayload) {
  return {
    id: p.id,
    body: p.body,
    received_at: p.receivedAt,
    processed_at: p.processedAt,
    error: p.error,
  };
}

/** Stores a webhook body. */
export async function insertInboundPayload(
  db: Executor,
  payload: NewInboundPayload,
): Promise<void> {
  // Every Meta callback is stored: the SQL text is written once.
  await db.executeQuery(insertRow("inbound_payloads", payloadRow(payload)));
}

/** insertInboundPayload() of many payloads in one statement. */
export async function insertInboundPayloads(
  db: Executor,
  payloads: readonly NewInboundPayload[],
): Promise<void> {
  await insertRows(db, "inbound_payloads", payloads.map(payloadRow));
}

export async function findInboundPayload(
  db: Executor,
  id: string,
): Promise<StoredPayload | undefined> {
  const r = await db.selectFrom("inbound_payloads")
    .select(["id", "body", "received_at"]).where("id", "=", id)
    .executeTakeFirst();
  return r ? { id: r.id, body: r.body, receivedAt: r.received_at } : undefined;
}

/** Marks a payload processed, with what could not be applied (null when all was). */
export async function markInboundPayloadProcessed(
  db: Executor,
  id: string,
  done: { at: string; error: string | null },
): Promise<void> {
  await db.updateTable("inbound_payloads")
    .set({ processed_at: done.at, error: done.error })
    .where("id", "=", id).execute();
}

/** Deletes payloads processed before `cutoff` (ISO time); returns how many. */
export async function pruneInboundPayloads(
  db: Executor,
  cutoff: string,
): Promise<number> {
  // processed_at >= received_at, so the received_at term only narrows the scan to its index.
  return await deleteInBatches(
    db,
    "inbound_payloads",
    sql`received_at < ${cutoff} and processed_at is not null and processed_at < ${cutoff}`,
  );
}

/**
 * When the latest stored status callback naming one of these phone number
 * ids arrived (doctor), newest first along the received index; undefined
 * when none is kept (payloads are pruned after a week).
 */
export async function lastStatusPayloadAt(
  db: Executor,
  phoneNumberIds: readonly string[],
): Promise<string | undefined> {
  if (phoneNumberIds.length === 0) return undefined;
  const names = sql.join(
    phoneNumberIds.map((id) => sql`body like ${`%"${id}"%`}`),
    sql` or `,
  );
  const { rows } = await sql<{ received_at: string }>`select received_at
    from inbound_payloads where body like '%"statuses"%' and (${names})
    order by received_at desc limit 1`.execute(db);
  return rows[0]?.received_at;
}

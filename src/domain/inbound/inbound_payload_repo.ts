import { sql } from "kysely";
import { deleteInBatches } from "../../db/prune.ts";
import type { Executor } from "../../db/schema.ts";

/** A stored Meta webhook body, as received. */
export interface StoredPayload {
  body: string;
  receivedAt: string;
}

/** The stored webhook body of a payload id, or undefined once pruned. */
export async function findInboundPayload(
  db: Executor,
  id: string,
): Promise<StoredPayload | undefined> {
  const row = await db.selectFrom("inbound_payloads")
    .select(["body", "received_at"]).where("id", "=", id)
    .executeTakeFirst();
  return row ? { body: row.body, receivedAt: row.received_at } : undefined;
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

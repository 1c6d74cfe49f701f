/** Stored Meta webhook bodies (inbound_payloads): kept as received, processed later or at once. */
import type { Executor } from "../../db/schema.ts";

export interface StoredPayload {
  id: string;
  body: string;
  /** Database time (ISO 8601 UTC with ms). */
  receivedAt: string;
}

/** Stores a webhook body; `processedAt` is set when nothing is left to do with it. */
export async function insertInboundPayload(
  db: Executor,
  payload: StoredPayload & { processedAt: string | null; error: string | null },
): Promise<void> {
  await db.insertInto("inbound_payloads").values({
    id: payload.id,
    body: payload.body,
    received_at: payload.receivedAt,
    processed_at: payload.processedAt,
    error: payload.error,
  }).execute();
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

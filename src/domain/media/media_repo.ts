import type { Executor, MediaTable } from "../../db/schema.ts";

export type MediaRow = MediaTable;

export async function insertMedia(db: Executor, row: MediaRow): Promise<void> {
  await db.insertInto("media").values(row).execute();
}

export async function findMediaById(
  db: Executor,
  id: string,
): Promise<MediaRow | undefined> {
  return await db.selectFrom("media").selectAll().where("id", "=", id)
    .executeTakeFirst();
}

/** Media of the account; another account's id is not found. */
export async function findAccountMedia(
  db: Executor,
  accountId: string,
  id: string,
): Promise<MediaRow | undefined> {
  return await db.selectFrom("media").selectAll()
    .where("id", "=", id).where("account_id", "=", accountId)
    .executeTakeFirst();
}

export async function findAccountMediaByKey(
  db: Executor,
  accountId: string,
  key: string,
): Promise<MediaRow | undefined> {
  return await db.selectFrom("media").selectAll()
    .where("storage_key", "=", key).where("account_id", "=", accountId)
    .executeTakeFirst();
}

export async function markMediaStored(
  db: Executor,
  id: string,
  done: { sha256: string; sizeBytes: number; mimeType: string; now: string },
): Promise<void> {
  await db.updateTable("media").set({
    status: "stored",
    sha256: done.sha256,
    size_bytes: done.sizeBytes,
    mime_type: done.mimeType,
    error: null,
    updated_at: done.now,
  }).where("id", "=", id).execute();
}

export async function markMediaFailed(
  db: Executor,
  id: string,
  failure: { error: string; now: string },
): Promise<void> {
  await db.updateTable("media").set({
    status: "failed",
    error: failure.error,
    updated_at: failure.now,
  }).where("id", "=", id).execute();
}

/** WhatsApp Business Accounts (wabas): the token, template sync state, Meta's account events. */
import type { RawBuilder } from "kysely";
import type { Executor, WabasTable } from "../../db/schema.ts";
import { fromJson, toJson } from "../../db/json.ts";
import { sameRow } from "../../db/row_guard.ts";
import type { Restriction } from "../channels/channel.ts";

export interface Waba {
  id: string;
  accountId: string;
  name: string | null;
  /** Sealed token `channels connect` was given; null for a WABA known from `channels create`. */
  accessTokenSealed: string | null;
  subscribedAt: string | null;
  templatesSyncedAt: string | null;
  templatesSyncAttemptedAt: string | null;
  templatesSyncError: string | null;
  banState: string | null;
  restrictions: Restriction[];
  accountEventAt: number | null;
}

function toWaba(r: WabasTable): Waba {
  return {
    id: r.id,
    accountId: r.account_id,
    name: r.name,
    accessTokenSealed: r.access_token_enc,
    subscribedAt: r.subscribed_at,
    templatesSyncedAt: r.templates_synced_at,
    templatesSyncAttemptedAt: r.templates_sync_attempted_at,
    templatesSyncError: r.templates_sync_error,
    banState: r.ban_state,
    restrictions: fromJson<Restriction[]>(r.restrictions, []),
    accountEventAt: r.account_event_at,
  };
}

/** Records a WABA of an account unless it is known (a WABA belongs to the first account that named it). */
export async function ensureWaba(
  db: Executor,
  input: { id: string; accountId: string; now: string },
): Promise<void> {
  await db.insertInto("wabas").values({
    id: input.id,
    account_id: input.accountId,
    name: null,
    access_token_enc: null,
    subscribed_at: null,
    templates_synced_at: null,
    templates_sync_attempted_at: null,
    templates_sync_error: null,
    quota_window_start: null,
    quota_used: 0,
    blocked_until: null,
    ban_state: null,
    restrictions: "[]",
    account_event_at: null,
    created_at: input.now,
    updated_at: input.now,
  }).onConflict((oc) => oc.column("id").doNothing()).execute();
}

export async function findWaba(
  db: Executor,
  id: string,
): Promise<Waba | undefined> {
  const r = await db.selectFrom("wabas").selectAll().where("id", "=", id)
    .executeTakeFirst();
  return r ? toWaba(r) : undefined;
}

export async function listAccountWabas(
  db: Executor,
  accountId: string,
): Promise<Waba[]> {
  const rows = await db.selectFrom("wabas").selectAll()
    .where("account_id", "=", accountId).orderBy("created_at").orderBy("id")
    .execute();
  return rows.map(toWaba);
}

/**
 * WABAs with a channel whose templates were never synced or last synced
 * before `syncedBefore`, and not tried since `attemptedBefore`.
 */
export async function listWabasDueForSync(
  db: Executor,
  input: { syncedBefore: string; attemptedBefore: string },
): Promise<string[]> {
  const rows = await db.selectFrom("wabas").select("id")
    .where((eb) =>
      eb.or([
        eb("templates_synced_at", "is", null),
        eb("templates_synced_at", "<", input.syncedBefore),
      ])
    )
    .where((eb) =>
      eb.or([
        eb("templates_sync_attempted_at", "is", null),
        eb("templates_sync_attempted_at", "<", input.attemptedBefore),
      ])
    )
    .where((eb) =>
      eb.exists(
        eb.selectFrom("channels").select("channels.id")
          .whereRef("channels.waba_id", "=", "wabas.id"),
      )
    )
    .orderBy("id").execute();
  return rows.map((r) => r.id);
}

/** A guard (PlannedWrites.expectRow): the WABA's account events are where they were read. */
export function sameAccountEventAt(
  id: string,
  accountEventAt: number | null,
): RawBuilder<unknown> {
  return sameRow("wabas", { id, account_event_at: accountEventAt });
}

export async function updateWaba(
  db: Executor,
  id: string,
  patch: Partial<Omit<WabasTable, "id" | "account_id" | "created_at">>,
): Promise<void> {
  await db.updateTable("wabas").set(patch).where("id", "=", id).execute();
}

/** Sets the WABA's restrictions and copies them onto each of its channels (the send path reads those). */
export async function setRestrictions(
  db: Executor,
  id: string,
  input: { restrictions: Restriction[]; now: string },
): Promise<void> {
  const json = toJson(input.restrictions);
  await db.updateTable("wabas")
    .set({ restrictions: json, updated_at: input.now })
    .where("id", "=", id).execute();
  await db.updateTable("channels")
    .set({ restrictions: json, updated_at: input.now })
    .where("waba_id", "=", id).execute();
}

import type { RawBuilder } from "kysely";
import type { ChannelsTable, Executor } from "../../db/schema.ts";
import { sameRow } from "../../db/row_guard.ts";
import { prepared } from "../../db/prepared.ts";
import { fromJson } from "../../db/json.ts";
import type {
  Channel,
  ChannelStatus,
  QualityRating,
  Restriction,
} from "./channel.ts";

export function toChannel(r: ChannelsTable): Channel {
  return {
    id: r.id,
    accountId: r.account_id,
    phoneNumber: r.phone_number,
    displayName: r.display_name,
    upstreamPhoneNumberId: r.upstream_phone_number_id,
    wabaId: r.waba_id,
    qualityRating: r.quality_rating as QualityRating,
    status: r.status as ChannelStatus,
    webhookVerified: r.webhook_verified === 1,
    sendRate: r.send_rate,
    createdAt: r.created_at,
    throughputLevel: r.throughput_level,
    messagingLimit: r.messaging_limit,
    healthCheckedAt: r.health_checked_at,
    onBizApp: r.on_biz_app === 1,
    metaStatus: r.meta_status,
    nameStatus: r.name_status,
    statusReason: r.status_reason,
    disconnectedBy: r.disconnected_by as Channel["disconnectedBy"],
    restrictions: fromJson<Restriction[]>(r.restrictions, []),
  };
}

/** The columns of a new channel that Meta fills in later (health check, webhooks). */
export const UNCHECKED_CHANNEL = {
  throughput_level: null,
  messaging_limit: null,
  health_checked_at: null,
  on_biz_app: 0,
  meta_status: null,
  name_status: null,
  status_reason: null,
  disconnected_by: null,
  restrictions: "[]",
  name_event_at: null,
  limit_event_at: null,
} as const;

export async function insertChannel(
  db: Executor,
  row: ChannelsTable,
): Promise<Channel> {
  await db.insertInto("channels").values(row).execute();
  return toChannel(row);
}

export async function updateChannel(
  db: Executor,
  id: string,
  patch: Partial<Omit<ChannelsTable, "id" | "account_id" | "created_at">>,
): Promise<void> {
  await db.updateTable("channels").set(patch).where("id", "=", id).execute();
}

/** The channels of a WABA (every account's: a WABA belongs to one). */
export async function listWabaChannels(
  db: Executor,
  wabaId: string,
): Promise<Channel[]> {
  const rows = await db.selectFrom("channels").selectAll()
    .where("waba_id", "=", wabaId)
    .orderBy("created_at").orderBy("id").execute();
  return rows.map(toChannel);
}

export async function listChannels(
  db: Executor,
  accountId: string,
): Promise<Channel[]> {
  const rows = await db.selectFrom("channels").selectAll()
    .where("account_id", "=", accountId)
    .orderBy("created_at").orderBy("id").execute();
  return rows.map(toChannel);
}

/** Finds a channel of an account; another account's id is not found. */
export async function findChannel(
  db: Executor,
  accountId: string,
  id: string,
): Promise<Channel | undefined> {
  const r = await db.selectFrom("channels").selectAll()
    .where("account_id", "=", accountId).where("id", "=", id)
    .executeTakeFirst();
  return r ? toChannel(r) : undefined;
}

export async function findChannelById(
  db: Executor,
  id: string,
): Promise<Channel | undefined> {
  const [row] = (await db.executeQuery(channelById(db, { id }))).rows;
  return row ? toChannel(row) : undefined;
}

// Every send job reads its channel and token, in one statement.
const channelById = prepared<"id", ChannelsTable>((db, p) =>
  db.selectFrom("channels").selectAll().where("id", "=", p("id"))
);

// Every Meta status callback names its channel by Meta's id: compiled once.
const channelByUpstreamId = prepared<"upstreamId", ChannelsTable>((db, p) =>
  db.selectFrom("channels").selectAll()
    .where("upstream_phone_number_id", "=", p("upstreamId"))
);

export async function findChannelByUpstreamId(
  db: Executor,
  upstreamPhoneNumberId: string,
): Promise<Channel | undefined> {
  const { rows } = await db.executeQuery(
    channelByUpstreamId(db, { upstreamId: upstreamPhoneNumberId }),
  );
  return rows[0] ? toChannel(rows[0]) : undefined;
}

/** Finds a channel of an account by its business number (`line` in resolve). */
export async function findChannelsByPhone(
  db: Executor,
  accountId: string,
  phoneNumber: string,
): Promise<Channel[]> {
  const rows = await db.selectFrom("channels").selectAll()
    .where("account_id", "=", accountId)
    .where("phone_number", "=", phoneNumber).execute();
  return rows.map(toChannel);
}

/** A channel with its sealed upstream access token, as a send needs them. */
export interface SendingChannel {
  channel: Channel;
  accessTokenSealed: string;
}

/** A channel and its sealed access token in one read (the send path's). */
export async function findSendingChannel(
  db: Executor,
  id: string,
): Promise<SendingChannel | undefined> {
  const [row] = (await db.executeQuery(channelById(db, { id }))).rows;
  return row
    ? { channel: toChannel(row), accessTokenSealed: row.access_token_enc }
    : undefined;
}

export async function readAccessTokenSealed(
  db: Executor,
  id: string,
): Promise<string | undefined> {
  const { rows } = await db.executeQuery(accessTokenOf(db, { id }));
  return rows[0]?.access_token_enc;
}

// Every send job reads its channel's token: compiled once.
const accessTokenOf = prepared<"id", { access_token_enc: string }>((db, p) =>
  db.selectFrom("channels").select("access_token_enc")
    .where("id", "=", p("id"))
);

/** The row of a channel (connect compares it with what Meta says). */
export async function findChannelRow(
  db: Executor,
  id: string,
): Promise<ChannelsTable | undefined> {
  return await db.selectFrom("channels").selectAll().where("id", "=", id)
    .executeTakeFirst();
}

/** The sealed token of one of a WABA's channels, a connected one first (its calls' token). */
export async function findWabaChannelToken(
  db: Executor,
  wabaId: string,
): Promise<string | undefined> {
  const r = await db.selectFrom("channels").select("access_token_enc")
    .where("waba_id", "=", wabaId)
    .orderBy(
      (eb) => eb.case().when("status", "=", "connected").then(0).else(1).end(),
    )
    .orderBy("created_at").limit(1).executeTakeFirst();
  return r?.access_token_enc;
}

/** Every channel's id but those an operator disconnected (Meta's news cannot change them). */
export async function listHealthCheckedChannelIds(
  db: Executor,
): Promise<string[]> {
  const rows = await db.selectFrom("channels").select("id")
    .where((eb) =>
      eb.or([
        eb("disconnected_by", "is", null),
        eb("disconnected_by", "!=", "operator"),
      ])
    )
    .orderBy("id").execute();
  return rows.map((r) => r.id);
}

/** entry[].time of the last name and limit webhooks applied to a channel. */
export async function readEventTimes(
  db: Executor,
  id: string,
): Promise<{ nameEventAt: number | null; limitEventAt: number | null }> {
  const r = await db.selectFrom("channels")
    .select(["name_event_at", "limit_event_at"]).where("id", "=", id)
    .executeTakeFirstOrThrow();
  return { nameEventAt: r.name_event_at, limitEventAt: r.limit_event_at };
}

/** A guard (PlannedWrites.expectRow): the channel's name and limit event times are as read. */
export function sameEventTimes(
  id: string,
  times: { nameEventAt: number | null; limitEventAt: number | null },
): RawBuilder<unknown> {
  return sameRow("channels", {
    id,
    name_event_at: times.nameEventAt,
    limit_event_at: times.limitEventAt,
  });
}

/** Disconnects a WABA's channels for Meta's reason (not those an operator disconnected). */
export async function disconnectWabaChannels(
  db: Executor,
  wabaId: string,
  input: { reason: string; at: string },
): Promise<void> {
  await db.updateTable("channels").set({
    status: "disconnected",
    disconnected_by: "meta",
    status_reason: input.reason,
    updated_at: input.at,
  }).where("waba_id", "=", wabaId)
    .where((eb) =>
      eb.or([
        eb("disconnected_by", "is", null),
        eb("disconnected_by", "!=", "operator"),
      ])
    ).execute();
}

/** Reconnects a WABA's channels that Meta's account news (`reasonLike`) disconnected. */
export async function reconnectWabaChannels(
  db: Executor,
  wabaId: string,
  input: { reasonLike: string; at: string },
): Promise<void> {
  await db.updateTable("channels").set({
    status: "connected",
    disconnected_by: null,
    status_reason: null,
    updated_at: input.at,
  }).where("waba_id", "=", wabaId)
    .where("disconnected_by", "=", "meta")
    .where("status_reason", "like", input.reasonLike)
    .execute();
}

/**
 * Marks the channels of these WABAs' webhook verified (those not yet). A
 * write to channels drops the lookup cache, so it writes only when one is
 * left: a verified channel costs one read. The update goes to `write` (a
 * plan's recorded writes) when given: it holds whatever ran meanwhile.
 */
export async function markWebhookVerified(
  db: Executor,
  wabaIds: readonly string[],
  write: Executor = db,
): Promise<void> {
  const ids = [...new Set(wabaIds)];
  if (ids.length === 0) return;
  const unverified = await db.selectFrom("channels").select("id")
    .where("waba_id", "in", ids).where("webhook_verified", "=", 0)
    .limit(1).executeTakeFirst();
  if (!unverified) return;
  await write.updateTable("channels").set({ webhook_verified: 1 })
    .where("waba_id", "in", ids).where("webhook_verified", "=", 0).execute();
}

/** Marks every channel's webhook verified (Meta's handshake is the app's, for all of them). */
export async function markAllWebhookVerified(db: Executor): Promise<void> {
  const unverified = await db.selectFrom("channels").select("id")
    .where("webhook_verified", "=", 0).limit(1).executeTakeFirst();
  if (!unverified) return;
  await db.updateTable("channels").set({ webhook_verified: 1 })
    .where("webhook_verified", "=", 0).execute();
}

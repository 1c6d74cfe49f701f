import type { ChannelsTable, Executor } from "../../db/schema.ts";
import { prepared } from "../../db/prepared.ts";
import type { Channel, ChannelStatus, QualityRating } from "./channel.ts";

function toChannel(r: ChannelsTable): Channel {
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
  };
}

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

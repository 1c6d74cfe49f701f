/**
 * A number's health as Meta reports it (GET /{phone-number-id}: display
 * name, quality rating, throughput level, messaging limit, status), read on
 * `channels connect`, hourly, and on a phone_number_quality_update webhook.
 * The channel's display name, quality rating and connected/disconnected
 * status follow Meta, except that a channel an operator disconnected by hand
 * stays disconnected, and one of a WABA Meta disabled stays disconnected.
 */
import type { Executor } from "../../db/schema.ts";
import type { Logger } from "../../log.ts";
import { toDbTime } from "../../db/time.ts";
import { enqueue } from "../../jobs/queue.ts";
import type { MetaPhoneNumber } from "../../upstream/meta_management.ts";
import {
  type CallMode,
  wabaCall,
  type WabaDeps,
} from "../wabas/waba_call_service.ts";
import { findWaba } from "../wabas/waba_repo.ts";
import type { Channel, ChannelStatus, QualityRating } from "./channel.ts";
import {
  findSendingChannel,
  listHealthCheckedChannelIds,
  updateChannel,
} from "./channel_repo.ts";

/** Meta's number statuses under which it can send. */
const SENDING = new Set(["CONNECTED", "FLAGGED", "RATE_LIMITED", "RESTRICTED"]);
/** Meta's number statuses under which it cannot (not registered, banned, gone). */
const NOT_SENDING = new Set([
  "PENDING",
  "DISCONNECTED",
  "BANNED",
  "DELETED",
  "MIGRATED",
  "UNVERIFIED",
]);

/** The channel status Meta's number status means; null for one that says nothing (unknown). */
export function statusFromMeta(
  metaStatus: string | null,
): ChannelStatus | null {
  const s = metaStatus?.toUpperCase() ?? "";
  if (SENDING.has(s)) return "connected";
  if (NOT_SENDING.has(s)) return "disconnected";
  return null;
}

function quality(value: string | null): QualityRating | null {
  const q = value?.toUpperCase();
  return q === "GREEN" || q === "YELLOW" || q === "RED" ? q : null;
}

/**
 * The channel columns a health read sets. `banned`: the WABA is disabled
 * by Meta, so nothing reconnects the channel.
 */
export function healthColumns(
  channel: Pick<Channel, "status" | "disconnectedBy" | "displayName">,
  number: MetaPhoneNumber,
  input: { at: string; banned: boolean },
) {
  const follows = statusFromMeta(number.status);
  let status = channel.status;
  let disconnectedBy = channel.disconnectedBy;
  let reason: string | null | undefined;
  if (channel.disconnectedBy !== "operator" && follows !== null) {
    if (follows === "disconnected") {
      status = "disconnected";
      disconnectedBy = "meta";
      reason = `Meta reports the number as ${number.status}`;
    } else if (!input.banned) {
      status = "connected";
      disconnectedBy = null;
      reason = null;
    }
  }
  return {
    display_name: number.verifiedName ?? channel.displayName,
    ...(quality(number.qualityRating)
      ? { quality_rating: quality(number.qualityRating)! }
      : {}),
    throughput_level: number.throughputLevel,
    messaging_limit: number.messagingLimit,
    meta_status: number.status,
    name_status: number.nameStatus,
    on_biz_app: number.isOnBizApp ? 1 : 0,
    status,
    disconnected_by: disconnectedBy,
    ...(reason === undefined ? {} : { status_reason: reason }),
    health_checked_at: input.at,
    updated_at: input.at,
  };
}

/** Writes a health read onto the channel. */
export async function applyNumberHealth(
  db: Executor,
  channel: Channel,
  input: { number: MetaPhoneNumber; at: string; banned: boolean },
): Promise<void> {
  await updateChannel(
    db,
    channel.id,
    healthColumns(channel, input.number, input),
  );
}

export interface HealthDeps extends WabaDeps {
  log: Logger;
}

/** Reads the channel's number from Meta and writes what it says; undefined for a channel that is gone. */
export async function refreshChannelHealth(
  deps: HealthDeps,
  channelId: string,
  opts: { mode: CallMode },
): Promise<MetaPhoneNumber | undefined> {
  const sending = await findSendingChannel(deps.db, channelId);
  if (!sending) return undefined;
  const { channel } = sending;
  const token = await deps.secrets.open(sending.accessTokenSealed);
  const number = await wabaCall(
    deps,
    { wabaId: channel.wabaId, mode: opts.mode },
    () => deps.meta.getPhoneNumber(token, channel.upstreamPhoneNumberId),
  );
  const waba = await findWaba(deps.db, channel.wabaId);
  // The channel as it is now: an operator may have changed it meanwhile.
  const current = (await findSendingChannel(deps.db, channelId))?.channel;
  if (!current) return number;
  await applyNumberHealth(deps.db, current, {
    number,
    at: toDbTime(deps.clock.now()),
    banned: waba?.banState === "DISABLE",
  });
  return number;
}

/**
 * The hourly tick's job: queues a health check of every channel but those
 * an operator disconnected (Meta's news cannot change them).
 */
export async function queueHealthChecks(
  deps: Pick<HealthDeps, "db" | "clock">,
  tickKey: string,
): Promise<number> {
  const now = deps.clock.now();
  let queued = 0;
  for (const id of await listHealthCheckedChannelIds(deps.db)) {
    const job = await enqueue(deps.db, {
      kind: "channel.health",
      payload: { channelId: id },
      uniqueKey: `channel.health:${id}:${tickKey}`,
    }, now);
    if (job) queued++;
  }
  return queued;
}

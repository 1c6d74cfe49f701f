/**
 * Number and account management webhooks (reference meta-management.md
 * §2): a number's quality or throughput changed (read it again), its display
 * name decided, the WABA restricted, disabled or reinstated, an alert. A
 * number is found among the WABA's channels by its digits
 * (display_phone_number carries no `+`); the WABA by entry[].id.
 */
import { toDbTime } from "../../db/time.ts";
import { toJson } from "../../db/json.ts";
import { enqueue } from "../../jobs/queue.ts";
import type { Channel, Restriction } from "../channels/channel.ts";
import {
  disconnectWabaChannels,
  listWabaChannels,
  readEventTimes,
  reconnectWabaChannels,
  sameEventTimes,
  updateChannel,
} from "../channels/channel_repo.ts";
import {
  sameAccountEventAt,
  setRestrictions,
  updateWaba,
} from "../wabas/waba_repo.ts";
import {
  type Applied,
  isStale,
  latest,
  type ManagementChange,
  str,
} from "./management_change.ts";

function digits(phone: string): string {
  return phone.replace(/\D/g, "");
}

/** The WABA's channel whose number the change names. */
async function channelOf(
  change: ManagementChange,
): Promise<Channel | undefined> {
  const named = str(change.value.display_phone_number);
  if (!named) return undefined;
  const wanted = digits(named);
  const channels = await listWabaChannels(change.db, change.waba.id);
  return channels.find((c) => digits(c.phoneNumber) === wanted);
}

/**
 * phone_number_quality_update: the number's messaging limit or throughput
 * changed (a FLAGGED/UNFLAGGED event carries no rating). The limit it
 * names is kept and the number is read again from Meta.
 */
export async function applyNumberQuality(
  change: ManagementChange,
): Promise<Applied> {
  const event = str(change.value.event)?.toUpperCase();
  const channel = await channelOf(change);
  if (!channel) {
    return {
      outcome: "unknown_number",
      note: "no channel of this WABA has that number",
      ...(event ? { event } : {}),
    };
  }
  const base = { subject: channel.id, ...(event ? { event } : {}) };
  const times = await readEventTimes(change.db, channel.id);
  const { limitEventAt } = times;
  if (isStale(change.entryTime, limitEventAt)) {
    return { outcome: "stale", ...base };
  }
  const limit = str(change.value.current_limit) ??
    str(change.value.max_daily_conversations_per_business);
  change.writes.expectRow(sameEventTimes(channel.id, times));
  await updateChannel(change.writes.db, channel.id, {
    ...(limit ? { messaging_limit: limit } : {}),
    limit_event_at: latest(change.entryTime, limitEventAt),
    updated_at: toDbTime(change.now),
  });
  await enqueue(change.writes.db, {
    kind: "channel.health",
    payload: { channelId: channel.id },
    uniqueKey: `channel.health:${channel.id}:${change.eventId}`,
  }, change.now);
  return { outcome: "applied", ...base, note: "number read again" };
}

/** phone_number_name_update: Meta's decision on the display name; an approved one becomes the channel's. */
export async function applyNumberName(
  change: ManagementChange,
): Promise<Applied> {
  const decision = str(change.value.decision)?.toUpperCase();
  if (!decision) return { outcome: "unreadable", note: "it has no decision" };
  const channel = await channelOf(change);
  if (!channel) {
    return {
      outcome: "unknown_number",
      note: "no channel of this WABA has that number",
      event: decision,
    };
  }
  const base = { subject: channel.id, event: decision };
  const times = await readEventTimes(change.db, channel.id);
  const { nameEventAt } = times;
  if (isStale(change.entryTime, nameEventAt)) {
    return { outcome: "stale", ...base };
  }
  const name = str(change.value.requested_verified_name);
  change.writes.expectRow(sameEventTimes(channel.id, times));
  await updateChannel(change.writes.db, channel.id, {
    name_status: decision,
    ...(decision === "APPROVED" && name ? { display_name: name } : {}),
    name_event_at: latest(change.entryTime, nameEventAt),
    updated_at: toDbTime(change.now),
  });
  const reason = str(change.value.rejection_reason);
  return {
    outcome: "applied",
    ...base,
    ...(reason ? { note: `rejected: ${reason}` } : {}),
  };
}

/** account_update events after which the WABA cannot send at all. */
const ENDS_ACCOUNT = new Set([
  "ACCOUNT_DELETED",
  "ACCOUNT_OFFBOARDED",
  "PARTNER_APP_UNINSTALLED",
]);

/** Disconnects the WABA's channels (not those an operator disconnected: they stay as they are). */
async function disconnectAll(change: ManagementChange, reason: string) {
  await disconnectWabaChannels(change.writes.db, change.waba.id, {
    reason,
    at: toDbTime(change.now),
  });
}

/** Reconnects the channels Meta's account news disconnected (never an operator's). */
async function reconnectAll(change: ManagementChange) {
  await reconnectWabaChannels(change.writes.db, change.waba.id, {
    reasonLike: "Meta %WhatsApp Business Account%",
    at: toDbTime(change.now),
  });
}

function restrictionsOf(value: Record<string, unknown>): Restriction[] {
  const info = Array.isArray(value.restriction_info)
    ? value.restriction_info
    : [];
  return info.flatMap((r) => {
    const type = str((r as Record<string, unknown>)?.restriction_type);
    if (!type) return [];
    const expiration = Number((r as Record<string, unknown>).expiration);
    return [{
      type,
      until: Number.isFinite(expiration) && expiration > 0
        ? new Date(expiration * 1000).toISOString()
        : null,
    }];
  });
}

/**
 * account_update: a restriction (until its expiry) refuses business-initiated
 * sends; a disable or deletion disconnects the WABA's channels with the
 * reason kept, a reinstatement reconnects them; the rest is recorded.
 */
export async function applyAccountUpdate(
  change: ManagementChange,
): Promise<Applied> {
  const event = str(change.value.event)?.toUpperCase();
  if (!event) return { outcome: "unreadable", note: "it has no event" };
  const { waba } = change;
  const at = toDbTime(change.now);
  const base = { subject: waba.id, event };
  const acts = event === "ACCOUNT_RESTRICTION" ||
    event === "DISABLED_UPDATE" || event === "ACCOUNT_RECONNECTED" ||
    ENDS_ACCOUNT.has(event);
  if (!acts) {
    const violation = (change.value.violation_info as Record<string, unknown>)
      ?.violation_type;
    return {
      outcome: "recorded",
      ...base,
      ...(str(violation) ? { note: `violation: ${str(violation)}` } : {}),
    };
  }
  if (isStale(change.entryTime, waba.accountEventAt)) {
    return { outcome: "stale", ...base };
  }
  const watermark = latest(change.entryTime, waba.accountEventAt);
  change.writes.expectRow(sameAccountEventAt(waba.id, waba.accountEventAt));
  await updateWaba(change.writes.db, waba.id, {
    account_event_at: watermark,
    updated_at: at,
  });
  if (event === "ACCOUNT_RESTRICTION") {
    const restrictions = restrictionsOf(change.value);
    await setRestrictions(change.writes.db, waba.id, { restrictions, now: at });
    return {
      outcome: "applied",
      ...base,
      note: restrictions.length
        ? restrictions.map((r) =>
          `${r.type} until ${r.until ?? "further notice"}`
        )
          .join(", ")
        : "restrictions lifted",
    };
  }
  if (event === "DISABLED_UPDATE") {
    const ban = change.value.ban_info as Record<string, unknown> | undefined;
    const state = str(ban?.waba_ban_state)?.toUpperCase() ?? null;
    await updateWaba(change.writes.db, waba.id, {
      ban_state: state,
      updated_at: at,
    });
    if (state === "DISABLE") {
      await disconnectAll(
        change,
        `Meta disabled the WhatsApp Business Account (${event}${
          str(ban?.waba_ban_date) ? ` on ${str(ban?.waba_ban_date)}` : ""
        })`,
      );
    } else if (state === "REINSTATE") await reconnectAll(change);
    return { outcome: "applied", ...base, note: `ban state ${state}` };
  }
  if (event === "ACCOUNT_RECONNECTED") {
    await reconnectAll(change);
    return { outcome: "applied", ...base };
  }
  await disconnectAll(
    change,
    `Meta ended the WhatsApp Business Account's access (${event})`,
  );
  return { outcome: "applied", ...base };
}

/** account_alerts: recorded (and logged by the caller) for the operator. */
export function applyAccountAlert(change: ManagementChange): Applied {
  const info = (change.value.alert_info ?? {}) as Record<string, unknown>;
  const type = str(info.alert_type);
  return {
    outcome: "recorded",
    subject: str(change.value.entity_id) ?? change.waba.id,
    ...(type ? { event: type } : {}),
    note: toJson({
      severity: str(info.alert_severity),
      status: str(info.alert_status),
      description: str(info.alert_description),
    }),
  };
}

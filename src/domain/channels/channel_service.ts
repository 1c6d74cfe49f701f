import type { Db } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { toDbTime } from "../../db/time.ts";
import { toE164 } from "../phones/phone.ts";
import type { Channel, ChannelStatus, QualityRating } from "./channel.ts";
import * as repo from "./channel_repo.ts";
import { ensureWaba } from "../wabas/waba_repo.ts";

export interface Deps {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
}

export interface ChannelInput {
  accountId: string;
  phoneNumber: string;
  displayName: string;
  upstreamPhoneNumberId: string;
  wabaId: string;
  accessToken: string;
  status?: ChannelStatus;
  qualityRating?: QualityRating;
  sendRate?: number;
}

/** Creates a channel (admin CLI); the access token is encrypted at rest. */
export async function createChannel(
  deps: Deps,
  input: ChannelInput,
): Promise<Channel> {
  const phone = toE164(input.phoneNumber);
  if (!phone) {
    throw new AppError(
      "INVALID_PHONE",
      `Cannot create channel: "${input.phoneNumber}" is not a valid E.164 number`,
    );
  }
  if (
    await repo.findChannelByUpstreamId(deps.db, input.upstreamPhoneNumberId)
  ) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot create channel: upstream phone number id "${input.upstreamPhoneNumberId}" is already used`,
    );
  }
  const now = toDbTime(deps.clock.now());
  // The WABA is where templates and Meta's account events live.
  await ensureWaba(deps.db, {
    id: input.wabaId,
    accountId: input.accountId,
    now,
  });
  return await repo.insertChannel(deps.db, {
    ...repo.UNCHECKED_CHANNEL,
    id: newId(),
    account_id: input.accountId,
    phone_number: phone,
    display_name: input.displayName,
    upstream_phone_number_id: input.upstreamPhoneNumberId,
    waba_id: input.wabaId,
    access_token_enc: await deps.secrets.seal(input.accessToken),
    quality_rating: input.qualityRating ?? "GREEN",
    status: input.status ?? "connected",
    webhook_verified: 0,
    send_rate: input.sendRate ?? null,
    created_at: now,
    updated_at: now,
  });
}

/** Updates a channel (admin CLI). */
export async function updateChannel(
  deps: Deps,
  id: string,
  patch: Partial<Omit<ChannelInput, "accountId">>,
): Promise<Channel> {
  const existing = await repo.findChannelById(deps.db, id);
  if (!existing) throw new AppError("NOT_FOUND", `Cannot find channel "${id}"`);
  const set: Parameters<typeof repo.updateChannel>[2] = {
    updated_at: toDbTime(deps.clock.now()),
  };
  if (patch.phoneNumber !== undefined) {
    const phone = toE164(patch.phoneNumber);
    if (!phone) {
      throw new AppError(
        "INVALID_PHONE",
        `Cannot update channel: "${patch.phoneNumber}" is not a valid E.164 number`,
      );
    }
    set.phone_number = phone;
  }
  if (patch.displayName !== undefined) set.display_name = patch.displayName;
  if (patch.upstreamPhoneNumberId !== undefined) {
    set.upstream_phone_number_id = patch.upstreamPhoneNumberId;
  }
  if (patch.wabaId !== undefined) {
    set.waba_id = patch.wabaId;
    await ensureWaba(deps.db, {
      id: patch.wabaId,
      accountId: existing.accountId,
      now: set.updated_at!,
    });
  }
  if (patch.accessToken !== undefined) {
    set.access_token_enc = await deps.secrets.seal(patch.accessToken);
  }
  if (patch.status !== undefined) {
    // By hand: Meta's news (a health check, a reinstated WABA) never undoes it.
    set.status = patch.status;
    set.disconnected_by = patch.status === "disconnected" ? "operator" : null;
    set.status_reason = patch.status === "disconnected"
      ? "Disconnected by an operator"
      : null;
  }
  if (patch.qualityRating !== undefined) {
    set.quality_rating = patch.qualityRating;
  }
  if (patch.sendRate !== undefined) set.send_rate = patch.sendRate;
  await repo.updateChannel(deps.db, id, set);
  return (await repo.findChannelById(deps.db, id))!;
}

export async function listChannels(
  deps: { db: Db },
  accountId: string,
): Promise<Channel[]> {
  return await repo.listChannels(deps.db, accountId);
}

/**
 * Decrypts a channel's upstream access token (only the upstream client
 * needs it). Every send job asks for it, so the opened token is kept by its
 * sealed text: a new token is sealed with a new IV, so a changed channel
 * reads a new sealed text and opens it (the cache cannot serve a stale one).
 */
export async function channelAccessToken(
  deps: Deps,
  channelId: string,
): Promise<string> {
  const sealed = await repo.readAccessTokenSealed(deps.db, channelId);
  if (!sealed) {
    throw new AppError("NOT_FOUND", `Cannot find channel "${channelId}"`);
  }
  return await deps.secrets.openCached(sealed);
}

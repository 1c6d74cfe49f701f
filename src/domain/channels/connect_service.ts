/**
 * `channels connect` (issue 28, item 5): a WhatsApp number from the Meta app
 * to a working channel. The token is checked (debug_token, or calls that
 * need each permission), the WABA's numbers are listed and a channel made
 * or updated per number from what Meta says, the app is subscribed to the
 * WABA (without it the test works but real messages never arrive), the
 * number registered when a PIN is given and it is not yet, the app's
 * webhook fields completed (with META_APP_ID), and the templates synced.
 * A second run changes nothing: what is already so is only checked.
 * (Past 300 lines: one command's steps, each small, in the order they run.)
 */
import type { Config } from "../../config.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { toDbTime } from "../../db/time.ts";
import type { MetaPhoneNumber } from "../../upstream/meta_management.ts";
import { toE164 } from "../phones/phone.ts";
import { ensureWaba, findWaba, updateWaba } from "../wabas/waba_repo.ts";
import { describeMetaError } from "../wabas/waba_call_service.ts";
import {
  appToken,
  checkToken,
  type TokenCheck,
} from "../wabas/token_check_service.ts";
import {
  type SyncSummary,
  syncWabaTemplates,
  type TemplateSyncDeps,
} from "../templates/template_sync_service.ts";
import { healthColumns } from "./channel_health_service.ts";
import {
  findChannelByUpstreamId,
  findChannelRow,
  insertChannel,
  UNCHECKED_CHANNEL,
  updateChannel,
} from "./channel_repo.ts";
import type { Channel } from "./channel.ts";
import {
  type AppWebhookResult,
  ensureAppWebhook,
} from "./app_webhook_service.ts";

export interface ConnectDeps extends TemplateSyncDeps {
  config: Pick<
    Config,
    "metaAppId" | "metaAppSecret" | "metaVerifyToken" | "publicBaseUrl"
  >;
}

export interface ConnectInput {
  accountId: string;
  wabaId: string;
  accessToken: string;
  /** Only this number of the WABA; all of them without it. */
  phoneNumberId?: string | undefined;
  /** The two-step PIN: registers the number on Cloud API when it is not. */
  pin?: string | undefined;
}

export interface ConnectedChannel {
  id: string;
  phoneNumber: string;
  displayName: string;
  upstreamPhoneNumberId: string;
  status: string;
  created: boolean;
  /** False on a run that found it as Meta says it is. */
  changed: boolean;
  registered: "registered" | "already" | "not_asked";
}

export interface ConnectResult {
  wabaId: string;
  wabaName: string | null;
  token: TokenCheck;
  channels: ConnectedChannel[];
  subscribed: "subscribed" | "already";
  webhook: AppWebhookResult;
  templates: SyncSummary;
}

function fail(step: string, err: unknown): AppError {
  return new AppError(
    err instanceof AppError && err.code !== "UPSTREAM_ERROR" &&
      err.code !== "UPSTREAM_UNAVAILABLE"
      ? err.code
      : "UPSTREAM_ERROR",
    `Cannot connect: ${step}: ${describeMetaError(err)}`,
    { cause: err },
  );
}

/** Runs one step; a failure names the step and Meta's code. */
async function step<T>(name: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw fail(name, err);
  }
}

/** Whether a number still needs `register` (not on Cloud API, or not connected). */
function needsRegistration(number: MetaPhoneNumber): boolean {
  return number.platformType === "NOT_APPLICABLE" ||
    number.throughputLevel === "NOT_APPLICABLE" ||
    (number.status !== null && number.status.toUpperCase() !== "CONNECTED");
}

/** Connects the WABA's numbers as channels of the account (see the top of this file). */
export async function connectWaba(
  deps: ConnectDeps,
  input: ConnectInput,
): Promise<ConnectResult> {
  const { wabaId, accessToken: token } = input;
  if (input.pin !== undefined && !/^\d{6}$/.test(input.pin)) {
    throw new AppError(
      "VALIDATION_ERROR",
      "Cannot connect: --pin must be the number's six-digit two-step verification PIN",
    );
  }
  const known = await findWaba(deps.db, wabaId);
  if (known && known.accountId !== input.accountId) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot connect: WhatsApp Business Account "${wabaId}" is connected to another account`,
    );
  }
  // With the app token, Meta's debug_token says what the token can do
  // before anything is asked with it; without, the calls that need each
  // permission say it (the number list among them).
  const app = appToken(deps.config) !== null;
  let tokenCheck = app ? await checkToken(deps, { token, wabaId }) : null;
  if (tokenCheck && !tokenCheck.ok) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot connect: ${tokenCheck.problem}`,
    );
  }
  const numbers = await step(
    "listing the WABA's phone numbers",
    () => deps.meta.listPhoneNumbers(token, wabaId),
  );
  const chosen = input.phoneNumberId
    ? numbers.filter((n) => n.id === input.phoneNumberId)
    : numbers;
  if (chosen.length === 0) {
    throw new AppError(
      "VALIDATION_ERROR",
      input.phoneNumberId
        ? `Cannot connect: phone number id "${input.phoneNumberId}" is not a number of WhatsApp Business Account "${wabaId}" (it has ${
          numbers.map((n) => n.id).join(", ") || "none"
        })`
        : `Cannot connect: WhatsApp Business Account "${wabaId}" has no phone number; add one in WhatsApp Manager first`,
    );
  }
  tokenCheck ??= await checkToken(deps, {
    token,
    wabaId,
    phoneNumberId: chosen[0]!.id,
  });
  if (!tokenCheck.ok) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot connect: ${tokenCheck.problem}`,
    );
  }
  const waba = await step(
    "reading the WABA",
    () => deps.meta.getWaba(token, wabaId),
  );
  const now = toDbTime(deps.clock.now());
  await ensureWaba(deps.db, { id: wabaId, accountId: input.accountId, now });
  const stored = await findWaba(deps.db, wabaId);
  const sameToken = stored?.accessTokenSealed
    ? await deps.secrets.open(stored.accessTokenSealed) === token
    : false;
  if (!sameToken || stored?.name !== waba.name) {
    await updateWaba(deps.db, wabaId, {
      name: waba.name,
      ...(sameToken
        ? {}
        : { access_token_enc: await deps.secrets.seal(token) }),
      updated_at: now,
    });
  }
  const channels: ConnectedChannel[] = [];
  for (const number of chosen) {
    channels.push(await connectNumber(deps, input, number, now));
  }
  const subscribed = await subscribeApp(deps, token, wabaId, now);
  // A refused webhook change (Meta could not reach the callback, say) is
  // reported, not fatal: sending works without it, and the rest goes on.
  const webhook: AppWebhookResult = await ensureAppWebhook(deps).catch((
    err,
  ) => ({ status: "failed", reason: describeMetaError(err), missing: [] }));
  const templates = await step(
    "syncing the templates",
    () => syncWabaTemplates(deps, wabaId, { mode: "live" }),
  );
  return {
    wabaId,
    wabaName: waba.name,
    token: tokenCheck,
    channels,
    subscribed,
    webhook,
    templates,
  };
}

/** POST /{waba}/subscribed_apps unless the app (META_APP_ID) is subscribed already. */
async function subscribeApp(
  deps: ConnectDeps,
  token: string,
  wabaId: string,
  now: string,
): Promise<"subscribed" | "already"> {
  const apps = await step(
    "reading the WABA's subscribed apps",
    () => deps.meta.subscribedApps(token, wabaId),
  );
  const appId = deps.config.metaAppId;
  let result: "subscribed" | "already" = "already";
  if (!appId || !apps.includes(appId)) {
    // Without META_APP_ID the app cannot be told from others: subscribing
    // again is harmless (Meta answers success).
    await step(
      "subscribing the app to the WABA",
      () => deps.meta.subscribeApp(token, wabaId),
    );
    result = appId || apps.length === 0 ? "subscribed" : "already";
  }
  const waba = await findWaba(deps.db, wabaId);
  if (!waba?.subscribedAt) {
    await updateWaba(deps.db, wabaId, { subscribed_at: now, updated_at: now });
  }
  return result;
}

/** Makes or updates the channel of one number, registering it when asked and needed. */
async function connectNumber(
  deps: ConnectDeps,
  input: ConnectInput,
  found: MetaPhoneNumber,
  now: string,
): Promise<ConnectedChannel> {
  const token = input.accessToken;
  let number = found;
  let registered: ConnectedChannel["registered"] = "not_asked";
  if (input.pin !== undefined) {
    if (needsRegistration(number)) {
      await step(
        `registering number "${number.id}"`,
        () => deps.meta.register(token, number.id, input.pin!),
      );
      number = await step(
        `reading number "${number.id}"`,
        () => deps.meta.getPhoneNumber(token, number.id),
      );
      registered = "registered";
    } else registered = "already";
  }
  const phone = toE164(number.displayPhoneNumber ?? "");
  if (!phone) {
    throw new AppError(
      "UPSTREAM_ERROR",
      `Cannot connect: Meta names number "${number.id}" "${number.displayPhoneNumber}", not a phone number`,
    );
  }
  const existing = await findChannelByUpstreamId(deps.db, number.id);
  if (existing && existing.accountId !== input.accountId) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot connect: phone number id "${number.id}" is a channel of another account`,
    );
  }
  const base: Pick<Channel, "status" | "disconnectedBy" | "displayName"> =
    existing ?? {
      status: "connected",
      disconnectedBy: null,
      displayName: number.verifiedName ?? phone,
    };
  const health = healthColumns(base, number, { at: now, banned: false });
  if (!existing) {
    const id = newId();
    await insertChannel(deps.db, {
      ...UNCHECKED_CHANNEL,
      ...health,
      id,
      account_id: input.accountId,
      phone_number: phone,
      upstream_phone_number_id: number.id,
      waba_id: input.wabaId,
      access_token_enc: await deps.secrets.seal(token),
      quality_rating: health.quality_rating ?? "GREEN",
      webhook_verified: 0,
      send_rate: null,
      status_reason: health.status_reason ?? null,
      created_at: now,
      updated_at: now,
    });
    return {
      id,
      phoneNumber: phone,
      displayName: health.display_name,
      upstreamPhoneNumberId: number.id,
      status: health.status,
      created: true,
      changed: true,
      registered,
    };
  }
  const row = (await findChannelRow(deps.db, existing.id))!;
  const sameToken = await deps.secrets.open(row.access_token_enc) === token;
  const patch: Record<string, unknown> = {
    ...(row.phone_number === phone ? {} : { phone_number: phone }),
    ...(row.waba_id === input.wabaId ? {} : { waba_id: input.wabaId }),
    ...(sameToken ? {} : { access_token_enc: await deps.secrets.seal(token) }),
  };
  for (const [k, v] of Object.entries(health)) {
    if (k === "health_checked_at" || k === "updated_at") continue;
    if ((row as unknown as Record<string, unknown>)[k] !== v) patch[k] = v;
  }
  const changed = Object.keys(patch).length > 0;
  await updateChannel(deps.db, existing.id, {
    ...patch,
    health_checked_at: now,
    ...(changed ? { updated_at: now } : {}),
  });
  return {
    id: existing.id,
    phoneNumber: phone,
    displayName: health.display_name,
    upstreamPhoneNumberId: number.id,
    status: health.status,
    created: false,
    changed,
    registered,
  };
}

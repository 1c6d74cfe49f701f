/**
 * `doctor` (issue 28, item 6): every prerequisite of sending and receiving
 * checked against Meta and this server's configuration, one check each,
 * with what to do when it fails. A check marked `blocking` stops sending
 * or receiving; the command exits non-zero when one of those fails.
 * (Past 300 lines: one function per check, each with its detail and fix.)
 */
import type { Config } from "../../config.ts";
import type { Logger } from "../../log.ts";
import { toDbTime } from "../../db/time.ts";
import { listAccountWabas, type Waba } from "../wabas/waba_repo.ts";
import {
  describeMetaError,
  type WabaDeps,
  wabaToken,
} from "../wabas/waba_call_service.ts";
import { checkToken } from "../wabas/token_check_service.ts";
import { findChannelById, listChannels } from "./channel_repo.ts";
import type { Channel } from "./channel.ts";
import { refusingRestriction } from "./channel.ts";
import {
  refreshChannelHealth,
  statusFromMeta,
} from "./channel_health_service.ts";
import { readAppWebhook } from "./app_webhook_service.ts";
import { countApprovedTemplates } from "../templates/template_repo.ts";
import { lastInboundAt } from "../conversations/conversation_repo.ts";
import { lastStatusPayloadAt } from "../inbound/inbound_payload_repo.ts";

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do; null when the check passed. */
  fix: string | null;
  /** Failing, it stops sending or receiving. */
  blocking: boolean;
}

export interface DoctorDeps extends WabaDeps {
  log: Logger;
  config: Pick<
    Config,
    | "metaAppId"
    | "metaAppSecret"
    | "metaVerifyToken"
    | "publicBaseUrl"
    | "metaGraphUrl"
  >;
}

function check(
  name: string,
  ok: boolean,
  detail: string,
  fix: string,
  blocking = true,
): Check {
  return { name, ok, detail, fix: ok ? null : fix, blocking };
}

function configChecks(config: DoctorDeps["config"]): Check[] {
  const url = config.publicBaseUrl;
  return [
    check(
      "META_APP_SECRET",
      !!config.metaAppSecret,
      config.metaAppSecret
        ? "set"
        : "not set: no webhook from Meta can be verified",
      "Set META_APP_SECRET to the app secret (App settings > Basic in the app dashboard)",
    ),
    check(
      "META_VERIFY_TOKEN",
      !!config.metaVerifyToken,
      config.metaVerifyToken
        ? "set"
        : "not set: Meta's verification handshake is refused",
      "Set META_VERIFY_TOKEN to a random string and give Meta the same one with the callback URL",
    ),
    check(
      "PUBLIC_BASE_URL",
      !!url && url.startsWith("https://"),
      url
        ? url.startsWith("https://")
          ? `${url} (callback ${url}/meta/webhook)`
          : `${url} is not https: Meta only posts webhooks to https`
        : "not set",
      "Set PUBLIC_BASE_URL to this server's public https origin",
    ),
  ];
}

async function appWebhookCheck(deps: DoctorDeps): Promise<Check> {
  const name = "app webhook fields";
  let read;
  try {
    read = await readAppWebhook(deps);
  } catch (err) {
    return check(
      name,
      false,
      describeMetaError(err),
      "Check META_APP_ID and META_APP_SECRET",
    );
  }
  if (read.status === "skipped") {
    return {
      name,
      ok: true,
      detail: `not checked: ${read.reason}`,
      fix: null,
      blocking: false,
    };
  }
  const noMessages = read.missing.includes("messages");
  const wrongCallback = read.reason?.startsWith("the callback") ?? false;
  const noSubscription = read.reason?.startsWith("the app has no") ?? false;
  return check(
    name,
    read.status === "already",
    read.status === "already"
      ? `subscribed to every field at ${read.callbackUrl}`
      : [
        read.reason,
        read.missing.length ? `missing ${read.missing.join(", ")}` : "",
      ].filter(Boolean).join("; "),
    "Run channels connect (with META_APP_ID set), or tick the fields under WhatsApp > Configuration > Webhook fields",
    noMessages || wrongCallback || noSubscription,
  );
}

async function wabaChecks(deps: DoctorDeps, waba: Waba, channels: Channel[]) {
  const out: Check[] = [];
  const label = `WABA ${waba.id}`;
  let token: string;
  try {
    token = await wabaToken(deps, waba.id);
  } catch (err) {
    out.push(
      check(
        `token (${label})`,
        false,
        describeMetaError(err),
        "Run channels connect",
      ),
    );
    return out;
  }
  const tokenCheck = await checkToken(deps, {
    token,
    wabaId: waba.id,
    phoneNumberId: channels[0]?.upstreamPhoneNumberId ?? null,
  }).catch((err) => ({
    ok: false,
    problem: describeMetaError(err),
    method: "calls" as const,
    unchecked: [] as string[],
  }));
  out.push(check(
    `token (${label})`,
    tokenCheck.ok,
    tokenCheck.ok
      ? `valid, with whatsapp_business_management and whatsapp_business_messaging (${
        tokenCheck.method === "debug_token" ? "debug_token" : "checked by calls"
      }${
        tokenCheck.unchecked.length
          ? `; ${tokenCheck.unchecked.join(", ")} not checked`
          : ""
      })`
      : tokenCheck.problem ?? "invalid",
    "Generate a system user token with both permissions on this WABA and run channels connect --access-token -",
  ));
  if (!tokenCheck.ok) return out;
  try {
    const apps = await deps.meta.subscribedApps(token, waba.id);
    const appId = deps.config.metaAppId;
    const ok = appId ? apps.includes(appId) : apps.length > 0;
    out.push(check(
      `app subscribed (${label})`,
      ok,
      ok
        ? appId
          ? `app ${appId} is subscribed`
          : `${apps.length} app(s) subscribed`
        : appId
        ? `app ${appId} is not subscribed: real messages never arrive`
        : "no app is subscribed: real messages never arrive",
      "Run channels connect (it calls POST /{waba-id}/subscribed_apps)",
    ));
  } catch (err) {
    out.push(
      check(
        `app subscribed (${label})`,
        false,
        describeMetaError(err),
        "Check the token",
      ),
    );
  }
  const approved = await countApprovedTemplates(deps.db, waba.id);
  out.push(check(
    `templates (${label})`,
    !!waba.templatesSyncedAt && !waba.templatesSyncError,
    waba.templatesSyncError
      ? `the last sync failed: ${waba.templatesSyncError}`
      : waba.templatesSyncedAt
      ? `synced at ${waba.templatesSyncedAt}, ${approved} approved`
      : "never synced",
    "Run templates sync --account <slug>",
    false,
  ));
  return out;
}

async function numberCheck(deps: DoctorDeps, read: Channel): Promise<Check> {
  const name = `number ${read.phoneNumber}`;
  try {
    const number = await refreshChannelHealth(deps, read.id, {
      mode: "live",
    });
    // As the health read left it.
    const channel = (await findChannelById(deps.db, read.id)) ?? read;
    const now = toDbTime(deps.clock.now());
    const restricted = refusingRestriction(channel, {
      businessInitiated: true,
      now,
    });
    const sending = statusFromMeta(number?.status ?? null) === "connected";
    const ok = sending && channel.status === "connected" && !restricted;
    return check(
      name,
      ok,
      [
        `Meta: ${number?.status ?? "unknown"}`,
        `quality ${number?.qualityRating ?? "unknown"}`,
        `throughput ${number?.throughputLevel ?? "unknown"}`,
        `limit ${number?.messagingLimit ?? "unknown"}`,
        `channel ${channel.status}${
          channel.statusReason ? ` (${channel.statusReason})` : ""
        }`,
        ...(restricted
          ? [
            `restricted: ${restricted.type} until ${
              restricted.until ?? "further notice"
            }`,
          ]
          : []),
      ].join(", "),
      !sending
        ? "Register the number (channels connect --pin -) or see WhatsApp Manager for why Meta stopped it"
        : restricted
        ? "Wait for the restriction to expire; see WhatsApp Manager > Account quality"
        : "Reconnect the channel (channels update --status connected) once the cause is fixed",
    );
  } catch (err) {
    return check(
      name,
      false,
      describeMetaError(err),
      "Check the channel's token and number id",
    );
  }
}

/** When Meta last posted to the account's channels: a message, a status report. */
async function trafficChecks(deps: DoctorDeps, channels: Channel[]) {
  const inbound = await lastInboundAt(deps.db, channels.map((c) => c.id));
  const status = await lastStatusPayloadAt(
    deps.db,
    channels.map((c) => c.upstreamPhoneNumberId),
  );
  const verified = channels.some((c) => c.webhookVerified);
  return [
    check(
      "webhook verified",
      verified,
      verified
        ? "Meta's handshake or a signed post reached this server"
        : "neither Meta's handshake nor a signed post has reached this server",
      "Set the callback URL PUBLIC_BASE_URL/meta/webhook and META_VERIFY_TOKEN in the app dashboard (or run channels connect with META_APP_ID)",
      false,
    ),
    check(
      "last inbound message",
      inbound !== null,
      inbound ?? "none received yet",
      "Write to the number from a phone; if nothing arrives, check the app subscription and webhook fields",
      false,
    ),
    check(
      "last status callback",
      !!status,
      status ?? "none received yet (or pruned)",
      "Send a message; if no status arrives, check the app subscription and the messages field",
      false,
    ),
  ];
}

/** Every check of the account's setup; `blocking` when one that stops sending or receiving failed. */
export async function runDoctor(
  deps: DoctorDeps,
  accountId: string,
): Promise<{ checks: Check[]; blocking: boolean }> {
  const checks = configChecks(deps.config);
  checks.push(await appWebhookCheck(deps));
  const channels = await listChannels(deps.db, accountId);
  if (channels.length === 0) {
    checks.push(check(
      "channels",
      false,
      "the account has no channel",
      "Run channels connect --account <slug> --waba-id <id> --access-token -",
    ));
  }
  for (const waba of await listAccountWabas(deps.db, accountId)) {
    const own = channels.filter((c) => c.wabaId === waba.id);
    if (own.length === 0) continue;
    checks.push(...await wabaChecks(deps, waba, own));
    for (const channel of own) checks.push(await numberCheck(deps, channel));
  }
  checks.push(...await trafficChecks(deps, channels));
  return {
    checks,
    blocking: checks.some((c) => c.blocking && !c.ok),
  };
}

/**
 * The app's webhook subscription (GET/POST /{app-id}/subscriptions with the
 * app token META_APP_ID|META_APP_SECRET): callback PUBLIC_BASE_URL +
 * /meta/webhook, verify token META_VERIFY_TOKEN, and the fields the server
 * applies. Meta checks the callback with the verification handshake at
 * once, so the server must be reachable there.
 */
import type { Config } from "../../config.ts";
import type { MetaManagementApi } from "../../upstream/meta_management.ts";
import { appToken } from "../wabas/token_check_service.ts";
import { WEBHOOK_FIELDS } from "../wabas/webhook_fields.ts";

export interface AppWebhookResult {
  /** failed: Meta refused the change (its callback check, say); `reason` says why. */
  status: "skipped" | "already" | "updated" | "failed";
  /** Why it was skipped. */
  reason?: string;
  callbackUrl?: string;
  /** Fields missing before (added when updated). */
  missing: string[];
}

type Deps = {
  meta: MetaManagementApi;
  config: Pick<
    Config,
    "metaAppId" | "metaAppSecret" | "metaVerifyToken" | "publicBaseUrl"
  >;
};

/** The callback Meta should post to. */
export function callbackUrlOf(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, "")}/meta/webhook`;
}

/** What the app's subscription lacks, read only (doctor). */
export async function readAppWebhook(deps: Deps): Promise<AppWebhookResult> {
  const app = appToken(deps.config);
  if (!app || !deps.config.metaAppId) {
    return {
      status: "skipped",
      reason: "META_APP_ID (and META_APP_SECRET) are not set",
      missing: [],
    };
  }
  const subs = await deps.meta.appSubscriptions(app, deps.config.metaAppId);
  const current = subs.find((s) => s.object === "whatsapp_business_account");
  const callbackUrl = deps.config.publicBaseUrl
    ? callbackUrlOf(deps.config.publicBaseUrl)
    : undefined;
  const missing = WEBHOOK_FIELDS.filter((f) => !current?.fields.includes(f));
  const sameCallback = !callbackUrl || current?.callbackUrl === callbackUrl;
  return {
    status: current && sameCallback && missing.length === 0
      ? "already"
      : "updated",
    ...(current?.callbackUrl ? { callbackUrl: current.callbackUrl } : {}),
    missing,
    ...(current && !sameCallback
      ? {
        reason: `the callback is ${current.callbackUrl}, not ${callbackUrl}`,
      }
      : current
      ? {}
      : { reason: "the app has no whatsapp_business_account subscription" }),
  };
}

/** Completes the app's subscription (fields and callback) when it lacks something. */
export async function ensureAppWebhook(deps: Deps): Promise<AppWebhookResult> {
  const read = await readAppWebhook(deps);
  if (read.status !== "updated") return read;
  const { publicBaseUrl, metaVerifyToken } = deps.config;
  if (!publicBaseUrl || !metaVerifyToken) {
    return {
      status: "skipped",
      reason:
        "PUBLIC_BASE_URL and META_VERIFY_TOKEN are needed for the callback",
      missing: read.missing,
    };
  }
  const app = appToken(deps.config)!;
  const subs = await deps.meta.appSubscriptions(app, deps.config.metaAppId!);
  const current = subs.find((s) => s.object === "whatsapp_business_account");
  const fields = [...new Set([...(current?.fields ?? []), ...WEBHOOK_FIELDS])];
  const callbackUrl = callbackUrlOf(publicBaseUrl);
  await deps.meta.subscribeAppWebhook(app, deps.config.metaAppId!, {
    callbackUrl,
    verifyToken: metaVerifyToken,
    fields,
  });
  return { status: "updated", callbackUrl, missing: read.missing };
}

/**
 * Whether an access token can do what the server does with it: valid, and
 * holding whatsapp_business_management (templates, numbers, subscriptions)
 * and whatsapp_business_messaging (sending) on the WABA. With META_APP_ID
 * (and META_APP_SECRET) Meta's debug_token says it; without, a call that
 * needs each permission does.
 */
import { UpstreamError } from "../../upstream/graph_api.ts";
import type { MetaManagementApi } from "../../upstream/meta_management.ts";
import { describeMetaError } from "./waba_call_service.ts";

export const REQUIRED_SCOPES = [
  "whatsapp_business_management",
  "whatsapp_business_messaging",
] as const;

export interface TokenCheck {
  ok: boolean;
  method: "debug_token" | "calls";
  /** Permissions the token lacks (on this WABA). */
  missing: string[];
  /** What is wrong, Meta's code named; null when ok. */
  problem: string | null;
  /** Unix seconds; null or 0 for a token that never expires. */
  expiresAt: number | null;
  /** A permission that could not be checked (the messaging probe without a number). */
  unchecked: string[];
}

/** The app token Meta takes for debug_token and the app's subscriptions, when configured. */
export function appToken(
  config: { metaAppId: string | undefined; metaAppSecret: string | undefined },
): string | null {
  return config.metaAppId && config.metaAppSecret
    ? `${config.metaAppId}|${config.metaAppSecret}`
    : null;
}

function permissionMissing(err: unknown): boolean {
  const code = err instanceof UpstreamError ? err.upstreamCode : null;
  return code === 10 || (code !== null && code >= 200 && code <= 299);
}

/** Checks the token for the WABA (and, without debug_token, one of its numbers). */
export async function checkToken(
  deps: {
    meta: MetaManagementApi;
    config: {
      metaAppId: string | undefined;
      metaAppSecret: string | undefined;
    };
  },
  input: { token: string; wabaId: string; phoneNumberId?: string | null },
): Promise<TokenCheck> {
  const app = appToken(deps.config);
  if (app) {
    let info;
    try {
      info = await deps.meta.debugToken(app, input.token);
    } catch (err) {
      return {
        ok: false,
        method: "debug_token",
        missing: [],
        problem:
          `Meta's debug_token failed with the app token META_APP_ID|META_APP_SECRET: ${
            describeMetaError(err)
          }`,
        expiresAt: null,
        unchecked: [],
      };
    }
    const missing = REQUIRED_SCOPES.filter((scope) => {
      if (!info.scopes.includes(scope)) return true;
      const granular = info.granular.find((g) => g.scope === scope);
      return granular !== undefined && granular.targetIds.length > 0 &&
        !granular.targetIds.includes(input.wabaId);
    });
    const expired = info.expiresAt !== null && info.expiresAt > 0 &&
      info.expiresAt * 1000 < Date.now();
    const problem = !info.valid || expired
      ? "the access token is invalid or expired (Meta error 190): generate a new system user token"
      : missing.length
      ? `the access token lacks ${
        missing.join(" and ")
      } on WhatsApp Business Account "${input.wabaId}": give the system user the WABA and generate a token with both permissions`
      : null;
    return {
      ok: problem === null,
      method: "debug_token",
      missing,
      problem,
      expiresAt: info.expiresAt,
      unchecked: [],
    };
  }
  const missing: string[] = [];
  const unchecked: string[] = [];
  // A call that needs the permission: refused for it (200, 10), the
  // permission is missing; refused otherwise (190 ...), the token is bad.
  const probes: [string, (() => Promise<unknown>) | null][] = [
    [
      "whatsapp_business_management",
      () => deps.meta.getWaba(input.token, input.wabaId),
    ],
    [
      "whatsapp_business_messaging",
      input.phoneNumberId
        ? () => deps.meta.businessProfile(input.token, input.phoneNumberId!)
        : null,
    ],
  ];
  for (const [scope, probe] of probes) {
    if (!probe) {
      unchecked.push(scope);
      continue;
    }
    try {
      await probe();
    } catch (err) {
      if (!permissionMissing(err)) {
        return {
          ok: false,
          method: "calls",
          missing,
          problem: describeMetaError(err),
          expiresAt: null,
          unchecked,
        };
      }
      missing.push(scope);
    }
  }
  return {
    ok: missing.length === 0,
    method: "calls",
    missing,
    problem: missing.length
      ? `the access token lacks ${
        missing.join(" and ")
      } on WhatsApp Business Account "${input.wabaId}" (Meta error 200): give the system user the WABA and generate a token with both permissions`
      : null,
    expiresAt: null,
    unchecked,
  };
}

/**
 * Graph calls made for a WABA (template syncs and refreshes, number health)
 * go through its budget: at most WABA_CALLS_PER_HOUR an hour window, of
 * which background work (cron, webhooks, send errors) takes at most
 * BACKGROUND_SHARE, leaving the rest to an operator's command. The budget
 * is in the database (wabas.quota_*), so a restart or another instance
 * does not reset it; an upstream rate limit (4, 80007, 80008) blocks the
 * WABA's calls until Meta's wait is over.
 */
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import type { Db } from "../../db/schema.ts";
import { quotaCap, quotaWindow } from "../quota/call_quota.ts";
import {
  blockQuota,
  readQuota,
  takeQuotaCall,
} from "../quota/call_quota_repo.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import { AppError, RetryLater } from "../../errors.ts";
import { UpstreamError } from "../../upstream/graph_api.ts";
import type { MetaManagementApi } from "../../upstream/meta_management.ts";
import { findWaba } from "./waba_repo.ts";
import { findWabaChannelToken } from "../channels/channel_repo.ts";

/** Graph calls per WABA per hour window: a sync of 6,000 templates is 60 pages. */
export const WABA_CALLS_PER_HOUR = 600;
const HOUR_MS = 60 * 60 * 1_000;
/** How long a rate limit without a wait blocks the WABA's calls. */
const THROTTLE_BLOCK_MS = 60_000;

export interface WabaDeps {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  meta: MetaManagementApi;
}

/** Who is calling: an operator's command (the whole budget) or background work (its share). */
export type CallMode = "live" | "background";

/**
 * The token for a WABA's calls: the one `channels connect` was given, else
 * the token of one of its channels (a WABA known from `channels create`).
 */
export async function wabaToken(
  deps: Pick<WabaDeps, "db" | "secrets">,
  wabaId: string,
): Promise<string> {
  const waba = await findWaba(deps.db, wabaId);
  if (waba?.accessTokenSealed) {
    return await deps.secrets.open(waba.accessTokenSealed);
  }
  const sealed = await findWabaChannelToken(deps.db, wabaId);
  if (!sealed) {
    throw new AppError(
      "NOT_FOUND",
      `Cannot call Meta for WhatsApp Business Account "${wabaId}": no channel or token is known for it; run channels connect`,
    );
  }
  return await deps.secrets.open(sealed);
}

function spent(wabaId: string, ms: number): AppError {
  return new AppError(
    "RATE_LIMITED",
    `Cannot call Meta for WhatsApp Business Account "${wabaId}" for ${
      Math.ceil(ms / 1_000)
    } s: its Graph call budget is spent, or Meta's rate limit (4, 80007, 80008) asked to wait`,
    { retryAfterMs: ms, retryable: true },
  );
}

/** Runs one Graph call for a WABA against its budget (RATE_LIMITED, retryable, when none is left). */
export async function wabaCall<T>(
  deps: WabaDeps,
  input: { wabaId: string; mode: CallMode },
  call: () => Promise<T>,
): Promise<T> {
  const now = deps.clock.now();
  const { wabaId } = input;
  const took = await takeQuotaCall(deps.db, "wabas", wabaId, {
    window: toDbTime(quotaWindow(now)),
    cap: quotaCap(WABA_CALLS_PER_HOUR, input.mode),
    now: toDbTime(now),
  });
  if (!took) {
    const quota = await readQuota(deps.db, "wabas", wabaId);
    const blocked = quota.blockedUntil ? Date.parse(quota.blockedUntil) : 0;
    // Blocked by Meta's rate limit: until then; else the budget is spent:
    // until the next hour window.
    const until = blocked > now.getTime()
      ? blocked
      : quotaWindow(now).getTime() + HOUR_MS;
    throw spent(wabaId, Math.max(1_000, until - now.getTime()));
  }
  try {
    return await call();
  } catch (err) {
    if (err instanceof UpstreamError && err.throttled) {
      const ms = err.retryAfterMs ?? THROTTLE_BLOCK_MS;
      await blockQuota(deps.db, "wabas", wabaId, toDbTime(addMs(now, ms)));
    }
    throw err;
  }
}

/**
 * What an operator reads of a failed management call: what failed, with
 * Meta's code and what to do about the usual ones (expired token 190,
 * missing permission 200/10, rate limit 4/80007, unknown object 100).
 */
export function describeMetaError(err: unknown): string {
  if (!(err instanceof UpstreamError)) {
    return err instanceof Error ? err.message : String(err);
  }
  const code = err.upstreamCode;
  const hint = code === 190
    ? "the access token is invalid or expired: generate a new system user token"
    : code === 10 || (code !== null && code >= 200 && code <= 299)
    ? "the token lacks a permission on this asset: give the system user the WABA (full control) and the whatsapp_business_management and whatsapp_business_messaging permissions"
    : code === 4 || code === 80007 || code === 80008
    ? "Meta's rate limit was reached: try again later"
    : code === 100
    ? "Meta does not know this object, or the token cannot see it: check the id"
    : err.category === "network"
    ? "Meta could not be reached"
    : null;
  const codeText = code === null ? "" : ` (Meta error ${code})`;
  return `${err.message}${codeText}${hint ? `: ${hint}` : ""}`;
}

/**
 * What a background job throws for a failed management call: "not now"
 * (RetryLater, no attempt spent) for a spent budget or Meta's rate limit;
 * otherwise the error, its message naming Meta's code and what to do
 * (describeMetaError), as retryable as it was.
 */
export function jobErrorOf(err: unknown): unknown {
  if (err instanceof AppError && err.code === "RATE_LIMITED") {
    return new RetryLater(err.retryAfterMs ?? THROTTLE_BLOCK_MS, err.message);
  }
  if (err instanceof UpstreamError) {
    if (err.throttled) {
      return new RetryLater(
        err.retryAfterMs ?? THROTTLE_BLOCK_MS,
        describeMetaError(err),
      );
    }
    return new AppError(err.code, describeMetaError(err), {
      retryable: err.retryable,
      ...(err.retryAfterMs === undefined
        ? {}
        : { retryAfterMs: err.retryAfterMs }),
      details: err.details,
      cause: err,
    });
  }
  return err;
}

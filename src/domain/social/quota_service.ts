/**
 * The upstream quota of each social account, kept in the database so that a
 * restart neither resets it nor forgets an upstream block: about
 * SOCIAL_CALLS_PER_HOUR calls per hour window, of which background refreshes
 * may use only BACKGROUND_SHARE, leaving the rest to on-demand reads.
 */
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { SecretBox } from "../../crypto.ts";
import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import { AppError } from "../../errors.ts";
import { UpstreamError } from "../../upstream/graph_api.ts";
import {
  createSocialClient,
  type GraphUsage,
  type SocialClient,
} from "../../upstream/social_client.ts";
import type { SocialGet } from "../../upstream/social_graph.ts";
import * as repo from "./social_repo.ts";
import { quotaCap, quotaWindow } from "../quota/call_quota.ts";
import {
  blockQuota,
  readQuota,
  takeQuotaCall,
} from "../quota/call_quota_repo.ts";

export interface SocialDeps {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  config: Pick<Config, "metaGraphUrl" | "socialCallsPerHour">;
  /** A refresh step's writes and its saved place commit together (runPlanned). */
  commits: Pick<GroupCommit, "runPlanned">;
}

const HOUR_MS = 60 * 60 * 1_000;
/** How long usage at 100 % blocks calls when the upstream names no time. */
const FULL_USAGE_BLOCK_MS = 60_000;

/** Milliseconds until the account may call again (end of the window, or of an upstream block). */
async function waitMs(deps: SocialDeps, id: string, now: Date) {
  const quota = await readQuota(deps.db, "social_accounts", id);
  const windowEnd = quotaWindow(now).getTime() + HOUR_MS;
  const blocked = quota.blockedUntil ? Date.parse(quota.blockedUntil) : 0;
  return blocked > now.getTime()
    ? blocked - now.getTime()
    : windowEnd - now.getTime();
}

function quotaError(id: string, ms: number): AppError {
  return new AppError(
    "RATE_LIMITED",
    `Cannot read the upstream for social account "${id}": its upstream quota is spent for ${
      Math.ceil(ms / 1_000)
    } s`,
    { retryAfterMs: ms, retryable: true },
  );
}

/**
 * A SocialGet for one social account: each call first takes one call of the
 * durable quota (RATE_LIMITED with retryAfterMs when none is left), and an
 * upstream throttling answer or full usage header blocks further calls.
 */
export async function quotaGet(
  deps: SocialDeps,
  id: string,
  options: {
    mode: "live" | "background";
    client?: SocialClient;
    signal?: AbortSignal;
  },
): Promise<SocialGet> {
  const sealed = await repo.readAccessTokenSealed(deps.db, id);
  if (!sealed) {
    throw new AppError("NOT_FOUND", `Cannot find social account "${id}"`);
  }
  const token = await deps.secrets.open(sealed);
  const client = options.client ??
    createSocialClient({ baseUrl: deps.config.metaGraphUrl });
  const cap = quotaCap(deps.config.socialCallsPerHour, options.mode);
  return async (path, query) => {
    const now = deps.clock.now();
    const took = await takeQuotaCall(deps.db, "social_accounts", id, {
      window: toDbTime(quotaWindow(now)),
      cap,
      now: toDbTime(now),
    });
    if (!took) throw quotaError(id, await waitMs(deps, id, now));
    let usage: GraphUsage | undefined;
    const block = (ms: number) =>
      blockQuota(deps.db, "social_accounts", id, toDbTime(addMs(now, ms)));
    try {
      const res = await client.get(token, path, query, {
        signal: options.signal,
        onUsage: (u) => usage = u,
      });
      return res.body;
    } catch (err) {
      if (err instanceof UpstreamError && err.throttled) {
        const ms = err.retryAfterMs ?? FULL_USAGE_BLOCK_MS;
        await block(ms);
        throw quotaError(id, ms);
      }
      throw err;
    } finally {
      // Usage at 100 %, on a success or an error, stops calls before the upstream refuses them.
      if (usage && (usage.regainMs > 0 || (usage.percent ?? 0) >= 100)) {
        await block(usage.regainMs || FULL_USAGE_BLOCK_MS);
      }
    }
  };
}

/** Whether an error is the quota's "not now". */
export function isQuotaError(err: unknown): err is AppError {
  return err instanceof AppError && err.code === "RATE_LIMITED";
}

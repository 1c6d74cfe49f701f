/** GET /social/account/summary: current counts, the period's totals and the follower series. */
import { fromJson } from "../../db/json.ts";
import type { SocialSnapshotsTable } from "../../db/schema.ts";
import type { SocialDeps } from "./quota_service.ts";
import { dayBound, type SocialNetwork, type SocialPost } from "./social.ts";
import * as repo from "./social_repo.ts";
import * as postRepo from "./social_post_repo.ts";

const DAY_MS = 24 * 60 * 60 * 1_000;
/** The period when the query names none. */
export const DEFAULT_PERIOD_DAYS = 30;

type InsightKey = "reach" | "profileVisits" | "websiteClicks";

export interface AccountSummary {
  channelId: string;
  network: SocialNetwork;
  name: string | null;
  username: string;
  current: {
    followersCount: number | null;
    followsCount: number | null;
    mediaCount: number | null;
    capturedAt: string | null;
  };
  period: {
    since: string;
    until: string;
    followerGrowth: number | null;
    postsPublished: number | null;
    likesTotal: number | null;
    commentsTotal: number | null;
    followerSeries: { date: string; followers: number }[];
  };
  insights: Record<InsightKey, number | null>;
}

/** Sum of the known values; null when there are values to sum and none is known. */
function total(values: (number | null | undefined)[]): number | null {
  const known = values.filter((v): v is number => typeof v === "number");
  return known.length === 0 && values.length > 0
    ? null
    : known.reduce((a, b) => a + b, 0);
}

function insightsOf(snapshots: SocialSnapshotsTable[]) {
  const out = {} as Record<InsightKey, number | null>;
  for (const key of ["reach", "profileVisits", "websiteClicks"] as const) {
    const values = snapshots.map((s) =>
      fromJson<Record<string, number | null>>(s.insights, {})[key]
    );
    const known = values.filter((v): v is number => typeof v === "number");
    out[key] = known.length ? known.reduce((a, b) => a + b, 0) : null;
  }
  return out;
}

/** `read`: the account has been read at least once; before that its totals are unknown, not 0. */
function periodOf(
  snapshots: SocialSnapshotsTable[],
  posts: SocialPost[],
  dates: { since: string; until: string; read: boolean },
): AccountSummary["period"] {
  const { read, ...range } = dates;
  // Only days with a snapshot: the upstream keeps no follower history.
  const followerSeries = snapshots
    .filter((s) => s.followers_count !== null)
    .map((s) => ({ date: s.date, followers: s.followers_count! }));
  const first = followerSeries[0];
  const last = followerSeries.at(-1);
  return {
    ...range,
    followerGrowth: first && last && followerSeries.length > 1
      ? last.followers - first.followers
      : null,
    postsPublished: read ? posts.length : null,
    likesTotal: read ? total(posts.map((p) => p.metrics.likes)) : null,
    commentsTotal: read ? total(posts.map((p) => p.metrics.comments)) : null,
    followerSeries,
  };
}

/** One entry per social account of the account (of `network` when given). */
export async function accountSummary(
  deps: SocialDeps,
  input: {
    accountId: string;
    network?: SocialNetwork;
    since?: string;
    until?: string;
  },
): Promise<AccountSummary[]> {
  const now = deps.clock.now();
  const until = input.until?.slice(0, 10) ?? now.toISOString().slice(0, 10);
  const since = input.since?.slice(0, 10) ??
    new Date(Date.parse(until) - DEFAULT_PERIOD_DAYS * DAY_MS)
      .toISOString().slice(0, 10);
  const dates = { since, until };
  const out: AccountSummary[] = [];
  for (
    const account of await repo.listSocialAccounts(deps.db, {
      accountId: input.accountId,
      network: input.network,
    })
  ) {
    const latest = await postRepo.latestSnapshot(deps.db, account.id);
    const snapshots = await postRepo.listSnapshots(deps.db, account.id, dates);
    const posts = await postRepo.postsOfPeriod(deps.db, account.id, {
      since: dayBound(since, "start"),
      until: dayBound(until, "end"),
    });
    out.push({
      channelId: account.id,
      network: account.network,
      name: account.name,
      username: account.username,
      current: {
        followersCount: latest?.followers_count ?? null,
        followsCount: latest?.follows_count ?? null,
        mediaCount: latest?.media_count ?? null,
        capturedAt: latest?.captured_at ?? null,
      },
      period: periodOf(snapshots, posts, { ...dates, read: !!latest }),
      insights: insightsOf(snapshots),
    });
  }
  return out;
}

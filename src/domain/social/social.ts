/** Social accounts and posts: types and the pure rules (metric sources, null versus zero). */
import type {
  SocialNetwork,
  SocialPostType,
  UpstreamPost,
} from "../../upstream/social_graph.ts";

export type { SocialNetwork, SocialPostType };

export const SOCIAL_NETWORKS = ["instagram", "facebook"] as const;
export const SOCIAL_POST_TYPES = [
  "image",
  "carousel",
  "reel",
  "video",
  "story",
  "text",
  "link",
] as const;

/** The spec's metric keys; `avg_watch_time_ms` exists on reels only. */
export const METRIC_KEYS = [
  "likes",
  "comments",
  "saved",
  "shares",
  "reach",
  "impressions",
  "views",
  "video_views",
  "plays",
  "total_interactions",
  "profile_visits",
  "follows",
  "replies",
  "clicks",
] as const;
export type MetricKey = (typeof METRIC_KEYS)[number] | "avg_watch_time_ms";
export type Metrics = Partial<Record<MetricKey, number | null>>;

/** One upstream insight metric and the keys of our metrics it fills. */
export interface InsightSource {
  metric: string;
  keys: MetricKey[];
}

const IG_FEED: InsightSource[] = [
  { metric: "views", keys: ["impressions", "views"] },
  { metric: "reach", keys: ["reach"] },
  { metric: "saved", keys: ["saved"] },
  { metric: "shares", keys: ["shares"] },
  { metric: "total_interactions", keys: ["total_interactions"] },
  { metric: "profile_visits", keys: ["profile_visits"] },
  { metric: "follows", keys: ["follows"] },
];

/**
 * The spec's "Metric sources" as data: the insight metrics asked per network
 * and post type. A metric the upstream rejects for a type is retried alone,
 * so a wrong guess here costs calls, never the other metrics.
 */
export const POST_INSIGHTS: Record<
  SocialNetwork,
  Partial<Record<SocialPostType, InsightSource[]>>
> = {
  instagram: {
    image: IG_FEED,
    carousel: IG_FEED,
    video: IG_FEED.map((s) =>
      s.metric === "views" ? { ...s, keys: [...s.keys, "plays"] } : s
    ),
    reel: [
      {
        metric: "views",
        keys: ["impressions", "views", "video_views", "plays"],
      },
      { metric: "reach", keys: ["reach"] },
      { metric: "saved", keys: ["saved"] },
      { metric: "shares", keys: ["shares"] },
      { metric: "total_interactions", keys: ["total_interactions"] },
      { metric: "ig_reels_avg_watch_time", keys: ["avg_watch_time_ms"] },
    ],
    story: [
      { metric: "views", keys: ["impressions", "views"] },
      { metric: "reach", keys: ["reach"] },
      { metric: "shares", keys: ["shares"] },
      { metric: "total_interactions", keys: ["total_interactions"] },
      { metric: "replies", keys: ["replies"] },
    ],
  },
  facebook: {
    text: [{ metric: "post_clicks", keys: ["clicks"] }],
    link: [{ metric: "post_clicks", keys: ["clicks"] }],
    image: [{ metric: "post_clicks", keys: ["clicks"] }],
    video: [
      { metric: "post_clicks", keys: ["clicks"] },
      { metric: "post_video_views", keys: ["video_views"] },
    ],
  },
};

/** Account insights of the summary: upstream metric to summary key, per network. */
export const ACCOUNT_INSIGHTS: Record<
  SocialNetwork,
  { metric: string; key: "reach" | "profileVisits" | "websiteClicks" }[]
> = {
  instagram: [
    { metric: "reach", key: "reach" },
    { metric: "profile_views", key: "profileVisits" },
    { metric: "website_clicks", key: "websiteClicks" },
  ],
  facebook: [
    { metric: "page_total_media_view_unique", key: "reach" },
    { metric: "page_views_total", key: "profileVisits" },
  ],
};

export interface SocialAccount {
  /** The `channelId` of the account's posts. */
  id: string;
  accountId: string;
  network: SocialNetwork;
  upstreamId: string;
  username: string;
  name: string | null;
  lastRefreshedAt: string | null;
  createdAt: string;
}

/** A stored post: the upstream's description plus what this service keeps. */
export interface SocialPost extends Omit<UpstreamPost, "fields"> {
  socialAccountId: string;
  network: SocialNetwork;
  expiresAt: string | null;
  metrics: Metrics;
  metricsUpdatedAt: string;
}

const DAY_MS = 24 * 60 * 60 * 1_000;

/** Every key null: what the upstream has not delivered is unknown, never 0. */
export function blankMetrics(type: SocialPostType): Metrics {
  const out: Metrics = {};
  for (const key of METRIC_KEYS) out[key] = null;
  if (type === "reel") out.avg_watch_time_ms = null;
  return out;
}

/** Stories expire 24 h after publication. */
export function expiresAtOf(post: UpstreamPost): string | null {
  return post.type === "story"
    ? new Date(Date.parse(post.publishedAt) + DAY_MS).toISOString()
    : null;
}

/** Fills the insight keys of `sources` from `values`; a metric left out of `values` becomes null. */
export function applyInsights(
  metrics: Metrics,
  sources: InsightSource[],
  values: Record<string, number>,
): Metrics {
  const out = { ...metrics };
  for (const source of sources) {
    const value = values[source.metric];
    for (const key of source.keys) out[key] = value ?? null;
  }
  return out;
}

/** The metrics after a fresh read of the post's fields: the field metrics change, the insight ones stay. */
export function applyFields(
  previous: Metrics | undefined,
  post: UpstreamPost,
): Metrics {
  return { ...blankMetrics(post.type), ...previous, ...post.fields };
}

/**
 * A `since` or `until` query value (a date or a timestamp) as an inclusive
 * ISO bound: a bare date covers its whole UTC day.
 */
export function dayBound(value: string, side: "start" | "end"): string {
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    return `${value}T${side === "start" ? "00:00:00.000" : "23:59:59.999"}Z`;
  }
  return new Date(value).toISOString();
}

/**
 * The insight sources worth one on-demand call: those that already have a
 * value, once any has one. A metric the upstream rejects for the post's type
 * stays null in the background refresh, and asking it again would fail the
 * whole list with (#100), so the delivered ones would never refresh.
 */
export function deliveredSources(
  sources: InsightSource[],
  metrics: Metrics,
): InsightSource[] {
  const known = (s: InsightSource) =>
    s.keys.some((k) => typeof metrics[k] === "number");
  return sources.some(known) ? sources.filter(known) : sources;
}

import { z } from "@hono/zod-openapi";
import {
  METRIC_KEYS,
  SOCIAL_NETWORKS,
  SOCIAL_POST_TYPES,
} from "../../domain/social/social.ts";
import type {
  CommentsView,
  PostView,
} from "../../domain/social/social_service.ts";
import type { AccountSummary } from "../../domain/social/summary_service.ts";
import { CursorQuery } from "../openapi.ts";

const Timestamp = z.iso.datetime().openapi({
  example: "2026-11-20T12:00:00.000Z",
});
const Network = z.enum(SOCIAL_NETWORKS);
const PostType = z.enum(SOCIAL_POST_TYPES);
const Metric = z.number().nullable();

/** `refresh=true|false`. */
const Refresh = z.enum(["true", "false"]).optional().transform((v) =>
  v === "true"
);

/** A date (a whole UTC day) or an ISO 8601 instant. */
const DateOrInstant = z.union([z.iso.date(), z.iso.datetime({ offset: true })])
  .openapi({ example: "2026-11-01" });

export const SocialPostSchema = z.object({
  id: z.string().openapi({ description: "Id on the upstream platform" }),
  network: Network,
  type: PostType,
  permalink: z.string().nullable(),
  caption: z.string().nullable(),
  mediaUrl: z.string().nullable(),
  thumbnailUrl: z.string().nullable(),
  publishedAt: Timestamp,
  expiresAt: Timestamp.nullable().openapi({
    description: "Stories only: publication plus 24 h",
  }),
  channelId: z.uuid(),
  channelUsername: z.string(),
  metrics: z.object({
    ...Object.fromEntries(METRIC_KEYS.map((k) => [k, Metric])) as Record<
      (typeof METRIC_KEYS)[number],
      typeof Metric
    >,
    avg_watch_time_ms: Metric.optional().openapi({ description: "Reels only" }),
  }).openapi({
    description:
      "null: the upstream does not currently deliver the metric (missing permission, or not applicable); 0 is a real zero",
  }),
  metricsUpdatedAt: Timestamp,
}).openapi("SocialPost");

export function toSocialPostResponse(p: PostView) {
  return {
    id: p.id,
    network: p.network,
    type: p.type,
    permalink: p.permalink,
    caption: p.caption,
    mediaUrl: p.mediaUrl,
    thumbnailUrl: p.thumbnailUrl,
    publishedAt: p.publishedAt,
    expiresAt: p.expiresAt,
    channelId: p.socialAccountId,
    channelUsername: p.channelUsername,
    metrics: p.metrics,
    metricsUpdatedAt: p.metricsUpdatedAt,
  };
}

export const SocialPostsQuery = CursorQuery.extend({
  since: DateOrInstant.optional().openapi({
    description: "Published at or after (a date covers its whole UTC day)",
  }),
  until: DateOrInstant.optional().openapi({
    description: "Published at or before (a date covers its whole UTC day)",
  }),
  network: Network.optional(),
  type: PostType.optional(),
  refresh: Refresh.openapi({
    description:
      "true queues a background refresh; the answer still shows cached data (re-query after about a minute)",
  }),
});

export const PostIdParam = z.object({
  id: z.string().regex(/^[0-9]{1,32}(_[0-9]{1,32})?$/, {
    message: "must be an upstream post id (digits, or <pageid>_<postid>)",
  }).openapi({
    param: { name: "id", in: "path" },
    example: "17895695668004550",
  }),
});

export const SocialPostQuery = z.strictObject({
  refresh: Refresh.openapi({
    description:
      "true reads the upstream now (1 to 2 calls of the account's quota; 429 with Retry-After when none is left)",
  }),
});

export const SocialCommentsQuery = z.strictObject({
  limit: z.coerce.number().int().min(1).max(300).default(100).openapi({
    description: "First-level comments",
  }),
  refresh: Refresh.openapi({
    description: "true bypasses the 10-minute cache",
  }),
});

const CommentFields = {
  id: z.string(),
  text: z.string(),
  username: z.string(),
  createdAt: z.string(),
  likeCount: z.number().int(),
};

export const SocialCommentsSchema = z.object({
  postId: z.string(),
  network: Network,
  total: z.number().int(),
  comments: z.array(z.object({
    ...CommentFields,
    replies: z.array(z.object(CommentFields)),
  })),
}).openapi("SocialComments");

export function toCommentsResponse(v: CommentsView) {
  return {
    postId: v.postId,
    network: v.network,
    total: v.total,
    comments: v.comments,
  };
}

export const SummaryQuery = z.strictObject({
  network: Network.optional(),
  since: DateOrInstant.optional().openapi({
    description: "First day of the period (default: 30 days before until)",
  }),
  until: DateOrInstant.optional().openapi({
    description: "Last day of the period (default: today)",
  }),
});

const Count = z.number().int().nullable();
const Day = z.string().openapi({ example: "2026-11-20" });

export const SummarySchema = z.object({
  accounts: z.array(z.object({
    channelId: z.uuid(),
    network: Network,
    name: z.string().nullable(),
    username: z.string(),
    current: z.object({
      followersCount: Count,
      followsCount: Count,
      mediaCount: Count,
      capturedAt: Timestamp.nullable(),
    }),
    period: z.object({
      since: Day,
      until: Day,
      followerGrowth: Count,
      postsPublished: Count,
      likesTotal: Count,
      commentsTotal: Count,
      followerSeries: z.array(
        z.object({ date: Day, followers: z.number().int() }),
      ).openapi({
        description:
          "One stored snapshot per day; days before the first snapshot are absent",
      }),
    }),
    insights: z.object({
      reach: z.number().nullable(),
      profileVisits: z.number().nullable(),
      websiteClicks: z.number().nullable(),
    }),
  })),
}).openapi("SocialAccountSummary");

export function toSummaryResponse(accounts: AccountSummary[]) {
  return { accounts };
}

/** What the simulator knows of Instagram accounts, Facebook Pages, their posts and comments. */
import type {
  SocialNetwork,
  SocialPostType,
} from "../upstream/social_graph.ts";
import type { SimulatorState } from "./state.ts";

export interface SimSocialAccount {
  id: string;
  network: SocialNetwork;
  username: string;
  name: string;
  followers: number;
  follows: number;
  /** `instagram_business_manage_insights` / `read_insights` granted: without it insights answer a permission error. */
  insightsGranted: boolean;
  /** Calls per hour before the business-use-case rate-limit error (80002 IG, 80001 FB). */
  callsPerHour: number;
  /** Account insights by metric (reach, profile_views, website_clicks, page_...). */
  insights: Record<string, number>;
}

export interface SimComment {
  id: string;
  text: string;
  username: string;
  at: number;
  likeCount: number;
  replies: Omit<SimComment, "replies">[];
}

export interface SimSocialPost {
  id: string;
  accountId: string;
  type: SocialPostType;
  caption: string;
  /** Unix ms. */
  publishedAt: number;
  /** null: the owner hides likes (the field is left out). */
  likes: number | null;
  /** IG comments_count includes replies; FB summary counts first-level ones. */
  commentsCount: number;
  /** FB only; the field is left out when 0. */
  shares: number;
  /** Values by insight metric; a metric without a value answers an empty series. */
  insights: Record<string, number>;
  comments: SimComment[];
}

export interface SocialSimState {
  accounts: Map<string, SimSocialAccount>;
  posts: Map<string, SimSocialPost>;
  /** Every social Graph call: path and account, for tests counting upstream calls. */
  calls: { path: string; accountId: string | null; at: number }[];
  usage: Map<string, { window: number; count: number }>;
  nextId: number;
}

const STATES = new WeakMap<SimulatorState, SocialSimState>();

/** The social part of a simulator's state, made on first use. */
export function socialState(state: SimulatorState): SocialSimState {
  let social = STATES.get(state);
  if (!social) {
    social = {
      accounts: new Map(),
      posts: new Map(),
      calls: [],
      usage: new Map(),
      nextId: 17_900_000_000_000,
    };
    STATES.set(state, social);
  }
  return social;
}

/** A fresh post id: numeric on IG, `<pageid>_<postid>` on FB (Appendix A). */
export function newPostId(social: SocialSimState, account: SimSocialAccount) {
  const n = String(social.nextId++);
  return account.network === "facebook" ? `${account.id}_${n}` : n;
}

/** Insight metrics each IG product type and FB post type supports (reference §8.2, §8.4). */
const IG_FEED = [
  "views",
  "reach",
  "likes",
  "comments",
  "saved",
  "shares",
  "total_interactions",
  "profile_visits",
  "profile_activity",
  "follows",
];
const SUPPORTED: Record<SocialPostType, string[]> = {
  image: IG_FEED,
  video: IG_FEED,
  carousel: IG_FEED.filter((m) =>
    !["profile_visits", "profile_activity", "follows"].includes(m)
  ),
  reel: [
    ...IG_FEED.slice(0, 7),
    "ig_reels_avg_watch_time",
    "ig_reels_video_view_total_time",
  ],
  story: [
    "views",
    "reach",
    "shares",
    "total_interactions",
    "profile_visits",
    "profile_activity",
    "follows",
    "replies",
    "navigation",
  ],
  text: ["post_clicks", "post_media_view", "post_total_media_view_unique"],
  link: ["post_clicks", "post_media_view", "post_total_media_view_unique"],
};
const FB_VIDEO = [...SUPPORTED.text, "post_video_views"];

export function supportedMetrics(
  network: SocialNetwork,
  type: SocialPostType,
): string[] {
  if (network === "instagram") return SUPPORTED[type];
  return type === "video" ? FB_VIDEO : SUPPORTED.text;
}

export const ACCOUNT_METRICS: Record<SocialNetwork, string[]> = {
  instagram: ["reach", "profile_views", "website_clicks", "accounts_engaged"],
  facebook: ["page_total_media_view_unique", "page_views_total", "page_fans"],
};

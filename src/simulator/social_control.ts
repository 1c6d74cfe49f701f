/** Seeding the simulator's social accounts and posts: functions for tests and dev, and /_sim/social. */
import { Hono } from "hono";
import { z } from "zod";
import {
  newPostId,
  type SimComment,
  type SimSocialAccount,
  type SimSocialPost,
  socialState,
} from "./social_state.ts";
import type { SimulatorState } from "./state.ts";

export type SimAccountInput =
  & Pick<SimSocialAccount, "id" | "network" | "username">
  & Partial<SimSocialAccount>;

/** Adds (or changes) an IG account or FB Page. */
export function addSocialAccount(
  state: SimulatorState,
  input: SimAccountInput,
): SimSocialAccount {
  const social = socialState(state);
  const account: SimSocialAccount = {
    name: input.username,
    followers: 0,
    follows: 0,
    insightsGranted: false,
    callsPerHour: 4_800,
    insights: {},
    ...social.accounts.get(input.id),
    ...input,
  };
  social.accounts.set(account.id, account);
  return account;
}

export type SimPostInput =
  & Pick<SimSocialPost, "type">
  & Partial<Omit<SimSocialPost, "accountId">>;

/** Adds posts to an account; returns them with their ids. */
export function addSocialPosts(
  state: SimulatorState,
  accountId: string,
  posts: SimPostInput[],
): SimSocialPost[] {
  const social = socialState(state);
  const account = social.accounts.get(accountId);
  if (!account) throw new Error(`No simulated social account "${accountId}"`);
  return posts.map((input) => {
    const post: SimSocialPost = {
      id: newPostId(social, account),
      accountId,
      caption: `A ${input.type} post`,
      publishedAt: Date.now(),
      likes: 0,
      commentsCount: input.comments?.length ?? 0,
      shares: 0,
      insights: {},
      comments: [],
      ...input,
    };
    social.posts.set(post.id, post);
    return post;
  });
}

const IG_TYPES = ["image", "carousel", "reel", "video", "story"] as const;
const FB_TYPES = ["text", "link", "image", "video"] as const;
export const DEMO_INSTAGRAM_ID = "17841400000000001";
export const DEMO_FACEBOOK_ID = "100000000000001";

function demoComments(seed: number, at: number): SimComment[] {
  return Array.from({ length: seed % 4 }, (_, i) => ({
    id: `${seed}${i}01`,
    text: `Comment ${i + 1} on post ${seed}`,
    username: `fan_${(seed + i) % 7}`,
    at: at + (i + 1) * 60_000,
    likeCount: (seed + i) % 3,
    replies: i === 0
      ? [{
        id: `${seed}${i}02`,
        text: "Thanks!",
        username: "demo.shop",
        at: at + 3_600_000,
        likeCount: 0,
      }]
      : [],
  }));
}

/**
 * The dev demo: one IG account (insights granted) and one FB Page (without
 * read_insights, so its pending metrics show null), 30 and 24 posts of every
 * type spread over the last 60 days, the IG stories within the last day.
 */
export function seedDemoSocial(state: SimulatorState, now = Date.now()): void {
  if (socialState(state).accounts.has(DEMO_INSTAGRAM_ID)) return;
  addSocialAccount(state, {
    id: DEMO_INSTAGRAM_ID,
    network: "instagram",
    username: "demo.shop",
    name: "Demo Shop",
    followers: 1_234,
    follows: 321,
    insightsGranted: true,
    insights: { reach: 870, profile_views: 64, website_clicks: 9 },
  });
  addSocialAccount(state, {
    id: DEMO_FACEBOOK_ID,
    network: "facebook",
    username: "demoshop",
    name: "Demo Shop",
    followers: 2_048,
  });
  const make = (types: readonly string[], count: number, network: string) =>
    Array.from({ length: count }, (_, i): SimPostInput => {
      const type = types[i % types.length] as SimPostInput["type"];
      const at = type === "story"
        ? now - (i + 1) * 40 * 60_000
        : now - (i + 1) * 2 * 86_400_000;
      const comments = demoComments(i, at);
      return {
        type,
        caption: `Demo ${network} ${type} #${i + 1}`,
        publishedAt: at,
        likes: i === 7 ? null : (i * 37) % 200,
        commentsCount: comments.length + (network === "instagram" ? 1 : 0),
        shares: i % 5,
        comments,
        insights: {
          views: 500 + i * 11,
          reach: 300 + i * 7,
          saved: i % 6,
          shares: i % 5,
          total_interactions: 20 + i,
          profile_visits: i % 4,
          follows: i % 3 === 0 ? 0 : 1,
          replies: i % 2,
          ig_reels_avg_watch_time: 4_000 + i * 100,
          post_clicks: i * 3,
          post_video_views: 100 + i,
        },
      };
    });
  addSocialPosts(state, DEMO_INSTAGRAM_ID, make(IG_TYPES, 30, "instagram"));
  addSocialPosts(state, DEMO_FACEBOOK_ID, make(FB_TYPES, 24, "facebook"));
}

const AccountPatch = z.strictObject({
  id: z.string().regex(/^[0-9]+$/),
  network: z.enum(["instagram", "facebook"]),
  username: z.string().min(1),
  name: z.string().optional(),
  followers: z.number().int().min(0).optional(),
  follows: z.number().int().min(0).optional(),
  insightsGranted: z.boolean().optional(),
  callsPerHour: z.number().int().min(1).optional(),
});

/** /_sim/social: accounts (add or change), the call log, the demo seed. */
export function socialControlRoutes(state: SimulatorState): Hono {
  const app = new Hono();
  app.get("/calls", () => Response.json({ calls: socialState(state).calls }));
  app.post("/demo", () => {
    seedDemoSocial(state);
    return Response.json({
      instagram: DEMO_INSTAGRAM_ID,
      facebook: DEMO_FACEBOOK_ID,
    });
  });
  app.post("/accounts", async (c) => {
    const parsed = AccountPatch.safeParse(await c.req.json().catch(() => null));
    if (!parsed.success) {
      return Response.json({
        error: { message: z.prettifyError(parsed.error) },
      }, {
        status: 400,
      });
    }
    return Response.json(addSocialAccount(state, parsed.data));
  });
  return app;
}

// Null versus zero over network x media type x insights permission: a metric
// the upstream does not deliver is null, a real 0 stays 0.
import assert from "node:assert/strict";
import { nextUpstreamId, startSocialWorld } from "../../_support/social.ts";
import { refreshSocialAccount } from "../../../src/domain/social/refresh_service.ts";
import { getSocialPost } from "../../../src/domain/social/social_service.ts";
import type { SimPostInput } from "../../../src/simulator/social_control.ts";
import { socialState } from "../../../src/simulator/social_state.ts";
import { METRIC_KEYS } from "../../../src/domain/social/social.ts";

// The upstream's values: several real zeros; `saved` and IG `replies` of
// feed posts are never given (an empty series), so they must come out null.
const IG_INSIGHTS = {
  views: 10,
  reach: 0,
  shares: 3,
  total_interactions: 0,
  profile_visits: 2,
  follows: 0,
  replies: 4,
  ig_reels_avg_watch_time: 5000,
};
const FB_INSIGHTS = { post_clicks: 0, post_video_views: 7 };

const N = null;
/** Expected metrics, written out by hand from the spec's "Metric sources". */
const EXPECTED: Record<string, Record<string, number | null>> = {
  // likes comments saved shares reach impressions views video_views plays total_interactions profile_visits follows replies clicks
  "instagram image granted": row(0, 5, N, 3, 0, 10, 10, N, N, 0, 2, 0, N, N),
  "instagram carousel granted": row(0, 5, N, 3, 0, 10, 10, N, N, 0, N, N, N, N),
  "instagram video granted": row(0, 5, N, 3, 0, 10, 10, N, 10, 0, 2, 0, N, N),
  "instagram reel granted": {
    ...row(0, 5, N, 3, 0, 10, 10, 10, 10, 0, N, N, N, N),
    avg_watch_time_ms: 5000,
  },
  "instagram story granted": row(N, N, N, 3, 0, 10, 10, N, N, 0, N, N, 4, N),
  "instagram image denied": row(0, 5, N, N, N, N, N, N, N, N, N, N, N, N),
  "instagram carousel denied": row(0, 5, N, N, N, N, N, N, N, N, N, N, N, N),
  "instagram video denied": row(0, 5, N, N, N, N, N, N, N, N, N, N, N, N),
  "instagram reel denied": {
    ...row(0, 5, N, N, N, N, N, N, N, N, N, N, N, N),
    avg_watch_time_ms: N,
  },
  "instagram story denied": row(N, N, N, N, N, N, N, N, N, N, N, N, N, N),
  // FB leaves `shares` out when it is 0: a real zero.
  "facebook text granted": row(0, 5, N, 0, N, N, N, N, N, N, N, N, N, 0),
  "facebook link granted": row(0, 5, N, 0, N, N, N, N, N, N, N, N, N, 0),
  "facebook image granted": row(0, 5, N, 0, N, N, N, N, N, N, N, N, N, 0),
  "facebook video granted": row(0, 5, N, 0, N, N, N, 7, N, N, N, N, N, 0),
  "facebook text denied": row(0, 5, N, 0, N, N, N, N, N, N, N, N, N, N),
  "facebook link denied": row(0, 5, N, 0, N, N, N, N, N, N, N, N, N, N),
  "facebook image denied": row(0, 5, N, 0, N, N, N, N, N, N, N, N, N, N),
  "facebook video denied": row(0, 5, N, 0, N, N, N, N, N, N, N, N, N, N),
};

function row(...values: (number | null)[]): Record<string, number | null> {
  const keys = METRIC_KEYS;
  assert.equal(values.length, keys.length);
  return Object.fromEntries(keys.map((k, i) => [k, values[i]!]));
}

const TYPES = {
  instagram: ["image", "carousel", "video", "reel", "story"],
  facebook: ["text", "link", "image", "video"],
} as const;

Deno.test("a metric the upstream does not deliver is null and a real 0 stays 0", async (t) => {
  await using world = await startSocialWorld();
  for (const network of ["instagram", "facebook"] as const) {
    for (const granted of [true, false]) {
      const posts: SimPostInput[] = TYPES[network].map((type) => ({
        type,
        likes: 0,
        commentsCount: 5,
        shares: 0,
        publishedAt: Date.now() - 60 * 60_000,
        insights: network === "instagram" ? IG_INSIGHTS : FB_INSIGHTS,
      }));
      const id = nextUpstreamId(network);
      const account = await world.connect({
        id,
        network,
        username: `${network}-${granted}`,
        insightsGranted: granted,
      }, posts);
      await refreshSocialAccount(world.h.container, account.id);
      const stored = [...socialState(world.sim.state).posts.values()]
        .filter((p) => p.accountId === id);
      assert.equal(stored.length, TYPES[network].length);
      for (const post of stored) {
        const label = `${network} ${post.type} ${
          granted ? "granted" : "denied"
        }`;
        await t.step(label, async () => {
          const view = await getSocialPost(world.h.container, {
            accountId: world.h.tenant.account.id,
            postId: post.id,
          });
          assert.deepEqual(view.metrics, EXPECTED[label], label);
          assert.equal(view.type, post.type);
          assert.equal(
            view.expiresAt,
            post.type === "story"
              ? new Date(
                Math.floor(post.publishedAt / 1000) * 1000 + 86_400_000,
              )
                .toISOString()
              : null,
          );
        });
      }
    }
  }
});

// Metric lists are data: a list the upstream rejects for one metric is read
// metric by metric, and what a post type does not support is not asked again
// in the same refresh.
import assert from "node:assert/strict";
import { nextUpstreamId, startSocialWorld } from "../../_support/social.ts";
import { refreshSocialAccount } from "../../../src/domain/social/refresh_service.ts";
import { getSocialPost } from "../../../src/domain/social/social_service.ts";
import { socialState } from "../../../src/simulator/social_state.ts";

Deno.test("a metric unsupported for carousels is read alone once, then left out for the other carousels", async () => {
  await using world = await startSocialWorld();
  const account = await world.connect(
    {
      id: nextUpstreamId("instagram"),
      network: "instagram",
      username: "shop",
      insightsGranted: true,
    },
    Array.from({ length: 3 }, (_, i) => ({
      type: "carousel" as const,
      publishedAt: Date.now() - (i + 1) * 3_600_000,
      insights: { views: 10 + i, reach: 5, saved: 0, follows: 3 },
    })),
  );
  await refreshSocialAccount(world.h.container, account.id);
  const posts = [...socialState(world.sim.state).posts.values()];
  const insightCalls = socialState(world.sim.state).calls
    .filter((c) => posts.some((p) => c.path.includes(`/${p.id}/insights`)));
  // The first carousel: the list (refused), then each of its 7 metrics;
  // the two others: one list without profile_visits and follows.
  assert.equal(insightCalls.length, 1 + 7 + 1 + 1);
  assert.ok(!insightCalls.at(-1)!.path.includes("follows"));
  for (const [i, post] of posts.entries()) {
    const view = await getSocialPost(world.h.container, {
      accountId: world.h.tenant.account.id,
      postId: post.id,
    });
    assert.equal(view.metrics.views, 10 + i);
    assert.equal(view.metrics.reach, 5);
    assert.equal(view.metrics.saved, 0);
    assert.equal(view.metrics.follows, null, "unsupported for carousels");
    assert.equal(view.metrics.profile_visits, null);
  }
});

Deno.test("refresh=true on a carousel reads its delivered insights in one call, leaving out the ones its type rejects", async () => {
  await using world = await startSocialWorld();
  const account = await world.connect({
    id: nextUpstreamId("instagram"),
    network: "instagram",
    username: "shop",
    insightsGranted: true,
  }, [{
    type: "carousel",
    publishedAt: Date.now() - 3_600_000,
    insights: { views: 10, reach: 5, saved: 0 },
  }]);
  await refreshSocialAccount(world.h.container, account.id);
  const [post] = socialState(world.sim.state).posts.values();
  post!.insights = { views: 99, reach: 7, saved: 1 };
  const before = world.calls();
  const view = await getSocialPost(world.h.container, {
    accountId: world.h.tenant.account.id,
    postId: post!.id,
    refresh: true,
  });
  const calls = socialState(world.sim.state).calls.slice(before);
  assert.equal(calls.length, 2, "the post, then one insights call");
  assert.ok(!calls[1]!.path.includes("follows"), calls[1]!.path);
  assert.equal(view.metrics.views, 99);
  assert.equal(view.metrics.reach, 7);
  assert.equal(view.metrics.saved, 1);
  assert.equal(view.metrics.follows, null);
});

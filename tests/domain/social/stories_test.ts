// Stories expire 24 h after publication and stay stored, with the metrics of
// their last refresh, after the upstream stops serving them.
import assert from "node:assert/strict";
import { nextUpstreamId, startSocialWorld } from "../../_support/social.ts";
import { refreshSocialAccount } from "../../../src/domain/social/refresh_service.ts";
import { getSocialPost } from "../../../src/domain/social/social_service.ts";
import { socialState } from "../../../src/simulator/social_state.ts";

Deno.test("a story keeps its last metrics after the upstream stops serving it", async () => {
  await using world = await startSocialWorld();
  const publishedAt = Math.floor((Date.now() - 23 * 3_600_000) / 1000) * 1000;
  const account = await world.connect({
    id: nextUpstreamId("instagram"),
    network: "instagram",
    username: "shop",
    insightsGranted: true,
  }, [{ type: "story", publishedAt, insights: { views: 40, replies: 0 } }]);
  await refreshSocialAccount(world.h.container, account.id);
  const [story] = socialState(world.sim.state).posts.values();
  const read = () =>
    getSocialPost(world.h.container, {
      accountId: world.h.tenant.account.id,
      postId: story!.id,
    });
  const first = await read();
  assert.equal(
    first.expiresAt,
    new Date(publishedAt + 86_400_000).toISOString(),
  );
  assert.equal(first.metrics.views, 40);
  assert.equal(first.metrics.replies, 0);

  // Two hours later the upstream no longer lists the story (nor has insights for it).
  story!.publishedAt -= 2 * 3_600_000;
  story!.insights = {};
  world.clock.advance(2 * 3_600_000);
  const calls = world.calls();
  await refreshSocialAccount(world.h.container, account.id);
  const paths = socialState(world.sim.state).calls.slice(calls).map((c) =>
    c.path
  );
  assert.ok(
    !paths.some((p) => p.includes(`/${story!.id}/insights`)),
    paths.join("\n"),
  );
  const later = await read();
  assert.equal(later.metrics.views, 40);
  assert.equal(later.metrics.replies, 0);
  assert.equal(later.metricsUpdatedAt, first.metricsUpdatedAt);
});

// The /social routes over a real simulator: on-demand reads within the
// durable quota (429 with Retry-After), the background refresh resuming in
// the next window, and the comments cache.
import assert from "node:assert/strict";
import {
  nextUpstreamId,
  type SocialWorld,
  startSocialWorld,
} from "../_support/social.ts";
import type { SimPostInput } from "../../src/simulator/social_control.ts";
import { assertErrorBody } from "./_routes.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";
import { createJobHandlers } from "../../src/jobs/registry.ts";
import { createLogger } from "../../src/log.ts";
import { socialState } from "../../src/simulator/social_state.ts";
import type { Harness } from "../_harness.ts";

const HOUR_MS = 3_600_000;
const POSTS = "/api/v2/social/posts";

function pool(h: Harness): WorkerPool {
  return new WorkerPool({
    db: h.container.db,
    clock: h.clock,
    log: createLogger("silent"),
    handlers: createJobHandlers(h.container),
    concurrency: 1,
  });
}

/** An Instagram account with one post, read once by its connect-time refresh job. */
async function connectAndRefresh(world: SocialWorld, post: SimPostInput) {
  await world.connect({
    id: nextUpstreamId("instagram"),
    network: "instagram",
    username: "shop",
  }, [post]);
  assert.equal(await pool(world.h).runOnce(), 1);
}

async function refreshJob(h: Harness) {
  return await h.container.db.selectFrom("jobs")
    .select(["state", "run_at"])
    .where("kind", "=", "social.refresh").executeTakeFirstOrThrow();
}

Deno.test("with the quota spent, refresh=true answers 429 with Retry-After, and the background refresh resumes in the next window", async () => {
  await using world = await startSocialWorld({
    env: { SOCIAL_CALLS_PER_HOUR: "10" },
  });
  const { h, clock } = world;
  clock.set(new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 10 * 60_000));
  const now = Date.now();
  await world.connect(
    {
      id: nextUpstreamId("instagram"),
      network: "instagram",
      username: "shop",
      insightsGranted: true,
    },
    Array.from({ length: 30 }, (_, i) => ({
      type: "image" as const,
      publishedAt: now - (i + 1) * HOUR_MS,
      likes: i,
      insights: { reach: 100 + i },
    })),
  );
  // The connect-time refresh takes the background's 8 calls, then snoozes.
  const workers = pool(h);
  assert.equal(await workers.runOnce(), 1);
  assert.equal(world.calls(), 8);
  const snoozed = await refreshJob(h);
  assert.equal(snoozed.state, "available");
  assert.equal(
    snoozed.run_at,
    new Date(clock.now().getTime() + 50 * 60_000).toISOString(),
  );

  const list = await h.request("GET", `${POSTS}?limit=100`);
  assert.equal(list.status, 200);
  assert.equal(list.body.data.length, 30);
  const post = list.body.data[29]; // the oldest: its insights are not read yet
  assert.equal(post.metrics.reach, null);

  // On-demand reads may use the 2 calls the background left.
  const fresh = await h.request("GET", `${POSTS}/${post.id}?refresh=true`);
  assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
  assert.equal(fresh.body.data.metrics.reach, 100 + 29);
  assert.equal(world.calls(), 10);

  const refused = await h.request("GET", `${POSTS}/${post.id}?refresh=true`);
  assertErrorBody(refused, 429, "RATE_LIMITED");
  assert.equal(refused.headers.get("retry-after"), String(50 * 60));
  assert.equal(world.calls(), 10, "a refused read makes no upstream call");
  const comments = await h.request("GET", `${POSTS}/${post.id}/comments`);
  assertErrorBody(comments, 429, "RATE_LIMITED");
  assert.equal(comments.headers.get("retry-after"), String(50 * 60));
  assert.equal(world.calls(), 10);
  // Without refresh the cached post still answers.
  assert.equal((await h.request("GET", `${POSTS}/${post.id}`)).status, 200);

  // Not yet due: nothing runs. In the next window the job resumes on the
  // insights where it stopped.
  assert.equal(await workers.runOnce(), 0);
  clock.advance(50 * 60_000);
  assert.equal(await workers.runOnce(), 1);
  const calls = socialState(world.sim.state).calls.slice(10);
  assert.equal(calls.length, 8);
  assert.ok(calls.every((c) => c.path.includes("/insights")));
  // 22 posts still need insights: snoozed again, to the end of this window.
  const again = await refreshJob(h);
  assert.equal(again.state, "available");
  assert.equal(
    again.run_at,
    new Date(clock.now().getTime() + HOUR_MS).toISOString(),
  );
});

Deno.test("a second comments read within 10 minutes is cached and calls nothing; refresh=true calls once", async () => {
  await using world = await startSocialWorld();
  const { h, clock } = world;
  await world.connect(
    { id: nextUpstreamId("facebook"), network: "facebook", username: "page" },
    [{
      type: "text",
      comments: [{
        id: "501",
        text: "Nice",
        username: "Ana",
        at: Date.parse("2026-11-01T10:00:00Z"),
        likeCount: 2,
        replies: [{
          id: "502",
          text: "Thanks",
          username: "Page",
          at: Date.parse("2026-11-01T11:00:00Z"),
          likeCount: 0,
        }],
      }],
    }],
  );
  assert.equal(await pool(h).runOnce(), 1);
  const postId = (await h.request("GET", POSTS)).body.data[0].id;
  const url = `${POSTS}/${postId}/comments`;
  const before = world.calls();

  const first = await h.request("GET", url);
  assert.equal(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body.meta.cached, false);
  assert.deepEqual(first.body.data, {
    postId,
    network: "facebook",
    total: 1,
    comments: [{
      id: "501",
      text: "Nice",
      username: "Ana",
      createdAt: "2026-11-01T10:00:00.000Z",
      likeCount: 2,
      replies: [{
        id: "502",
        text: "Thanks",
        username: "Page",
        createdAt: "2026-11-01T11:00:00.000Z",
        likeCount: 0,
      }],
    }],
  });
  assert.equal(world.calls(), before + 1);

  clock.advance(9 * 60_000);
  const second = await h.request("GET", url);
  assert.equal(second.body.meta.cached, true);
  assert.deepEqual(second.body.data, first.body.data);
  assert.equal(world.calls(), before + 1, "a cached read calls nothing");

  const refreshed = await h.request("GET", `${url}?refresh=true`);
  assert.equal(refreshed.body.meta.cached, false);
  assert.equal(world.calls(), before + 2);

  clock.advance(10 * 60_000 + 1);
  const expired = await h.request("GET", url);
  assert.equal(expired.body.meta.cached, false);
  assert.equal(world.calls(), before + 3);
});

Deno.test("GET /social/posts?refresh=true queues one refresh and answers from the cache", async () => {
  await using world = await startSocialWorld();
  const { h } = world;
  await connectAndRefresh(world, { type: "image" });
  const before = world.calls();
  const res = await h.request("GET", `${POSTS}?refresh=true`);
  assert.equal(res.status, 200);
  assert.equal(res.body.data.length, 1);
  assert.equal(world.calls(), before, "the request itself calls nothing");
  await h.request("GET", `${POSTS}?refresh=true`);
  const open = await h.container.db.selectFrom("jobs").select("id")
    .where("kind", "=", "social.refresh").where("state", "=", "available")
    .execute();
  assert.equal(open.length, 1, "one open refresh per social account");
});

Deno.test("a post the upstream no longer has: refresh=true keeps the stored post, its comments are 404", async () => {
  await using world = await startSocialWorld();
  const { h } = world;
  await connectAndRefresh(world, { type: "image", likes: 4 });
  const [stored] = (await h.request("GET", POSTS)).body.data;
  socialState(world.sim.state).posts.delete(stored.id);

  const fresh = await h.request("GET", `${POSTS}/${stored.id}?refresh=true`);
  assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
  assert.deepEqual(fresh.body.data, stored);
  const comments = await h.request("GET", `${POSTS}/${stored.id}/comments`);
  assertErrorBody(comments, 404, "NOT_FOUND");
});

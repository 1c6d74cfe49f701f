// The simulator's Instagram and Facebook endpoints, read through the real social client.
import assert from "node:assert/strict";
import { createSimulatorApp } from "../../src/simulator/app.ts";
import { createSimulatorState } from "../../src/simulator/state.ts";
import {
  addSocialAccount,
  addSocialPosts,
} from "../../src/simulator/social_control.ts";
import { storeMedia } from "../../src/simulator/media.ts";
import { createSocialClient } from "../../src/upstream/social_client.ts";
import {
  fetchComments,
  fetchInsights,
  fetchPostsPage,
  type SocialGet,
} from "../../src/upstream/social_graph.ts";
import { UpstreamError } from "../../src/upstream/graph_api.ts";

function world() {
  const state = createSimulatorState({ appSecret: "s" });
  const app = createSimulatorApp(state);
  const client = createSocialClient({
    baseUrl: "http://sim.test/v22.0",
    fetch: (input, init) =>
      Promise.resolve(app.request(new Request(input, init))),
  });
  const get: SocialGet = async (path, query) =>
    (await client.get("token", path, query)).body;
  return { state, app, client, get };
}

Deno.test("the media edge pages 25 at a time, newest first, each post once", async () => {
  const { state, get } = world();
  addSocialAccount(state, {
    id: "1784140001",
    network: "instagram",
    username: "shop",
  });
  const now = Date.now();
  const seeded = addSocialPosts(
    state,
    "1784140001",
    Array.from({ length: 60 }, (_, i) => ({
      type: "image" as const,
      publishedAt: now - i * 60_000,
    })),
  );
  const seen: string[] = [];
  let after: string | null = null;
  let pages = 0;
  do {
    const page = await fetchPostsPage(get, {
      network: "instagram",
      objectId: "1784140001",
      edge: "posts",
      after,
    });
    seen.push(...page.posts.map((p) => p.id));
    after = page.after;
    pages++;
  } while (after);
  assert.equal(pages, 3);
  assert.deepEqual(seen, seeded.map((p) => p.id));
});

Deno.test("insights reject a whole list for one unsupported metric with (#100)", async () => {
  const { state, get } = world();
  addSocialAccount(state, {
    id: "1784140002",
    network: "instagram",
    username: "shop",
    insightsGranted: true,
  });
  const [carousel] = addSocialPosts(state, "1784140002", [{
    type: "carousel",
    insights: { reach: 4 },
  }]);
  await assert.rejects(
    fetchInsights(get, carousel!.id, { metrics: ["reach", "follows"] }),
    (err: unknown) =>
      err instanceof UpstreamError && err.upstreamCode === 100 &&
      /follows metric/.test(String(err.details && JSON.stringify(err.details))),
  );
  // A supported metric without data is an empty series, not 0.
  assert.deepEqual(
    await fetchInsights(get, carousel!.id, { metrics: ["reach", "saved"] }),
    { reach: 4 },
  );
});

Deno.test("insights without the permission answer a permission error", async () => {
  const { state, get } = world();
  addSocialAccount(state, {
    id: "1000001",
    network: "facebook",
    username: "page",
  });
  const [post] = addSocialPosts(state, "1000001", [{ type: "text" }]);
  assert.match(post!.id, /^1000001_\d+$/);
  await assert.rejects(
    fetchInsights(get, post!.id, { metrics: ["post_clicks"] }),
    (err: unknown) =>
      err instanceof UpstreamError && err.category === "permission_denied",
  );
});

Deno.test("comments come with replies and page until the limit", async () => {
  const { state, get } = world();
  addSocialAccount(state, {
    id: "1784140003",
    network: "instagram",
    username: "shop",
  });
  const comments = Array.from({ length: 130 }, (_, i) => ({
    id: `9${i}`,
    text: `c${i}`,
    username: "fan",
    at: Date.now(),
    likeCount: i,
    replies: i === 0
      ? [{ id: "8", text: "r", username: "shop", at: Date.now(), likeCount: 0 }]
      : [],
  }));
  const [post] = addSocialPosts(state, "1784140003", [{
    type: "image",
    comments,
  }]);
  const read = await fetchComments(get, {
    network: "instagram",
    postId: post!.id,
    limit: 120,
  });
  assert.equal(read.comments.length, 120);
  assert.equal(read.comments[0]!.replies[0]!.text, "r");
  assert.equal(read.comments[119]!.likeCount, 119);
});

Deno.test("past its hourly calls an Instagram account answers 80002 with usage headers", async () => {
  const { state, client } = world();
  addSocialAccount(state, {
    id: "1784140004",
    network: "instagram",
    username: "shop",
    callsPerHour: 2,
  });
  const first = await client.get("t", "1784140004", { fields: "id" });
  assert.equal(first.usage.percent, 50);
  await client.get("t", "1784140004", { fields: "id" });
  const err = await client.get("t", "1784140004", { fields: "id" }).then(
    () => assert.fail("expected the rate-limit error"),
    (e) => e,
  );
  assert.ok(err instanceof UpstreamError);
  assert.equal(err.upstreamCode, 80002);
  assert.equal(err.throttled, true);
  assert.ok(err.retryAfterMs! > 0 && err.retryAfterMs! <= 60 * 60_000);
});

Deno.test("a WhatsApp media id still reaches the media lookup", async () => {
  const { state, app } = world();
  const media = await storeMedia(state, new Uint8Array([1, 2]), "image/png");
  const res = await app.request(`/v22.0/${media.id}`, {
    headers: { authorization: "Bearer t" },
  });
  assert.equal(res.status, 200);
  assert.equal((await res.json()).mime_type, "image/png");
});

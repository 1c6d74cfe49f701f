// GET /social/posts: cursor pagination (each post once, newest first),
// filters, and 400s for malformed queries.
import assert from "node:assert/strict";
import { ENGINES } from "../_harness.ts";
import { nextUpstreamId, startSocialWorld } from "../_support/social.ts";
import { assertErrorBody } from "./_routes.ts";
import { refreshSocialAccount } from "../../src/domain/social/refresh_service.ts";

const POSTS = "/api/v2/social/posts";
const DAY_MS = 86_400_000;

for (const engine of ENGINES) {
  Deno.test({
    name:
      `[${engine}] cursor pagination over posts returns each post once, newest first`,
    sanitizeResources: engine === "sqlite",
    sanitizeOps: engine === "sqlite",
    fn: async () => {
      await using world = await startSocialWorld({ engine });
      const base = Date.parse("2026-11-01T00:00:00Z");
      // Pairs share a publication time, so the order must break ties by id.
      const ig = await world.connect(
        {
          id: nextUpstreamId("instagram"),
          network: "instagram",
          username: "ig",
        },
        Array.from({ length: 23 }, (_, i) => ({
          type: i % 2 ? "reel" as const : "image" as const,
          publishedAt: base - Math.floor(i / 2) * DAY_MS,
        })),
      );
      const fb = await world.connect(
        { id: nextUpstreamId("facebook"), network: "facebook", username: "fb" },
        Array.from({ length: 18 }, (_, i) => ({
          type: "text" as const,
          publishedAt: base - Math.floor(i / 3) * DAY_MS - 3_600_000,
        })),
      );
      for (const a of [ig, fb]) {
        await refreshSocialAccount(world.h.container, a.id);
      }
      const seen: { id: string; publishedAt: string }[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const qs: string = cursor
          ? `limit=7&cursor=${encodeURIComponent(cursor)}`
          : "limit=7";
        const res = await world.h.request("GET", `${POSTS}?${qs}`);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.ok(res.body.data.length <= 7);
        seen.push(...res.body.data);
        cursor = res.body.meta.cursor;
        assert.equal(res.body.meta.hasMore, cursor !== null);
        pages++;
      } while (cursor);
      assert.equal(pages, 6);
      assert.equal(seen.length, 41);
      assert.equal(new Set(seen.map((p) => p.id)).size, 41, "no post twice");
      const expected = [...seen].sort((a, b) =>
        b.publishedAt.localeCompare(a.publishedAt) || b.id.localeCompare(a.id)
      );
      assert.deepEqual(seen.map((p) => p.id), expected.map((p) => p.id));

      const reels = await world.h.request(
        "GET",
        `${POSTS}?network=instagram&type=reel&limit=100`,
      );
      assert.equal(reels.body.data.length, 11);
      assert.ok(
        reels.body.data.every((p: { type: string; channelId: string }) =>
          p.type === "reel" && p.channelId === ig.id
        ),
      );
      const day = await world.h.request(
        "GET",
        `${POSTS}?since=2026-10-31&until=2026-10-31&limit=100`,
      );
      // 2 IG posts at 00:00 on the 31st, 3 FB posts at 23:00 on the 31st.
      assert.equal(day.body.data.length, 5);
      assert.equal(day.body.data[0].channelUsername, "fb");
    },
  });
}

Deno.test("GET /social/posts refuses malformed queries with 400", async () => {
  await using world = await startSocialWorld();
  for (
    const qs of [
      "limit=0",
      "limit=101",
      "type=album",
      "network=tiktok",
      "since=yesterday",
      "refresh=yes",
      "cursor=nope",
      "page=2",
    ]
  ) {
    const res = await world.h.request("GET", `${POSTS}?${qs}`);
    assertErrorBody(res, 400, "VALIDATION_ERROR", qs);
  }
  for (
    const path of [
      `${POSTS}/abc`,
      `${POSTS}/1_2_3`,
      `${POSTS}/123/comments?limit=301`,
      `${POSTS}/123/comments?limit=0`,
      "/api/v2/social/account/summary?network=x",
      "/api/v2/social/account/summary?until=2026-13-01",
    ]
  ) {
    const res = await world.h.request("GET", path);
    assertErrorBody(res, 400, "VALIDATION_ERROR", path);
  }
  assertErrorBody(
    await world.h.request("GET", `${POSTS}/123`),
    404,
    "NOT_FOUND",
  );
});

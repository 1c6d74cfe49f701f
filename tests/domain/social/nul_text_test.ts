// A NUL (U+0000) in a Graph API answer is stored as U+FFFD, as in a webhook:
// on SQLite a caption holding one was read back cut at it.
import assert from "node:assert/strict";
import { nextUpstreamId, startSocialWorld } from "../../_support/social.ts";
import { refreshSocialAccount } from "../../../src/domain/social/refresh_service.ts";
import { getSocialPost } from "../../../src/domain/social/social_service.ts";

for (const engine of ["sqlite", "libsql"] as const) {
  Deno.test({
    name:
      `[${engine}] a NUL in a post's caption from the Graph API is stored as U+FFFD`,
    sanitizeResources: engine === "sqlite",
    sanitizeOps: engine === "sqlite",
    fn: async () => {
      await using world = await startSocialWorld({ engine });
      const account = await world.connect({
        id: nextUpstreamId("instagram"),
        network: "instagram",
        username: "shop",
      }, [{ type: "image", caption: "Oferta\u0000 de hoy" }]);
      await refreshSocialAccount(world.h.container, account.id);
      const row = await world.h.container.db.selectFrom("social_posts")
        .select("id").executeTakeFirstOrThrow();
      const post = await getSocialPost(world.h.container, {
        accountId: world.h.tenant.account.id,
        postId: row.id,
      });
      assert.equal(post.caption, "Oferta\uFFFD de hoy");
    },
  });
}

// Social connect and refresh write without an interactive transaction on
// libSQL (issue 30): each refresh step's writes and its saved place in one
// batch after its reads, guarded on the posts it read.
import assert from "node:assert/strict";
import { type EngineName, ENGINES } from "../../_harness.ts";
import {
  nextUpstreamId,
  type SocialWorld,
  startSocialWorld,
} from "../../_support/social.ts";
import { anotherInstance, racing } from "../../_support/race.ts";
import { refreshSocialAccount } from "../../../src/domain/social/refresh_service.ts";
import { connectSocialAccount } from "../../../src/domain/social/social_service.ts";
import { toJson } from "../../../src/db/json.ts";

/** A test per engine on its own social world, transactions forbidden on libSQL. */
function socialTest(
  name: string,
  fn: (world: SocialWorld, engine: EngineName) => Promise<void>,
): void {
  for (const engine of ENGINES) {
    Deno.test({
      name: `[${engine}] ${name}`,
      sanitizeResources: engine === "sqlite",
      sanitizeOps: engine === "sqlite",
      fn: async () => {
        await using world = await startSocialWorld({ engine });
        const c = world.h.container;
        if (c.dbBatch) c.dbBatch.forbidTransactions = true;
        await fn(world, engine);
      },
    });
  }
}

socialTest(
  "a connect and a whole refresh run with no transaction on libSQL; connecting it again is refused",
  async (world) => {
    const c = world.h.container;
    const upstreamId = nextUpstreamId("instagram");
    const ig = await world.connect(
      { id: upstreamId, network: "instagram", username: "ig" },
      Array.from({ length: 5 }, (_, i) => ({
        type: "image" as const,
        publishedAt: Date.parse("2026-11-01T00:00:00Z") - i * 3_600_000,
      })),
    );
    const jobs = await c.db.selectFrom("jobs").select("kind")
      .where("kind", "=", "social.refresh").execute();
    assert.equal(jobs.length, 1, "the first refresh is queued with it");
    await refreshSocialAccount(c, ig.id);
    const posts = await c.db.selectFrom("social_posts").select("id")
      .where("social_account_id", "=", ig.id).execute();
    assert.equal(posts.length, 5);
    const snapshots = await c.db.selectFrom("social_snapshots")
      .select("date").where("social_account_id", "=", ig.id).execute();
    assert.equal(snapshots.length, 1);
    const account = await c.db.selectFrom("social_accounts")
      .select(["refresh_state", "last_refreshed_at"])
      .where("id", "=", ig.id).executeTakeFirstOrThrow();
    assert.equal(account.refresh_state, null);
    assert.notEqual(account.last_refreshed_at, null);
    await assert.rejects(
      connectSocialAccount(c, {
        accountId: world.h.tenant.account.id,
        network: "instagram",
        upstreamId,
        username: "ig",
        accessToken: "token",
      }),
      /already connected/,
    );
  },
);

socialTest(
  "metrics written to a post between a refresh's read of it and its batch are kept: the step is planned again",
  async (world, engine) => {
    const c = world.h.container;
    const fb = await world.connect(
      { id: nextUpstreamId("facebook"), network: "facebook", username: "fb" },
      [{ type: "text", publishedAt: Date.parse("2026-11-01T00:00:00Z") }],
    );
    await refreshSocialAccount(c, fb.id);
    const [post] = await c.db.selectFrom("social_posts")
      .select(["id", "metrics"]).where("social_account_id", "=", fb.id)
      .execute();
    world.clock.advance(60_000);
    // A Facebook refresh plans: its profile (0), the account (1), then
    // the posts page (2). Between that plan's read of the post and its
    // batch, another writer records a metric on the post.
    const libsql = engine === "libsql";
    const race = racing(c, async () => {
      await c.db.updateTable("social_posts").set({
        metrics: toJson({ ...JSON.parse(post!.metrics), reach: 4242 }),
        metrics_updated_at: world.clock.now().toISOString(),
      }).where("id", "=", post!.id).execute();
    }, 2);
    await refreshSocialAccount({ ...c, ...race }, fb.id);
    const after = await c.db.selectFrom("social_posts").select("metrics")
      .where("id", "=", post!.id).executeTakeFirstOrThrow();
    if (libsql) {
      assert.ok(race.plans > 3, "the posts step was planned again");
      assert.equal(JSON.parse(after.metrics).reach, 4242, "kept");
    }
  },
);

socialTest(
  "a connect that another instance's connect of the same account overtakes between its read and its batch is refused, not a constraint error",
  async (world, engine) => {
    const c = world.h.container;
    const input = {
      accountId: world.h.tenant.account.id,
      network: "facebook" as const,
      upstreamId: nextUpstreamId("facebook"),
      username: "fb",
      accessToken: "token",
    };
    const race = racing(c, async () => {
      await connectSocialAccount(anotherInstance(c), input);
    });
    const mine = connectSocialAccount({ ...c, ...race }, input);
    if (engine === "libsql") {
      // Planned again, it finds the account connected (that plan throws).
      await assert.rejects(mine, /already connected/);
    } else await mine;
    const rows = await c.db.selectFrom("social_accounts").select("id")
      .where("upstream_id", "=", input.upstreamId).execute();
    assert.equal(rows.length, 1);
  },
);

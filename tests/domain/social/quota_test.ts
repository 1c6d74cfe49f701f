// The social quota lives in the database: a restart neither resets it nor
// loses the place of an unfinished refresh, and upstream throttling blocks
// further calls until the upstream says they may resume.
import assert from "node:assert/strict";
import { ENGINES } from "../../_harness.ts";
import { nextUpstreamId, startSocialWorld } from "../../_support/social.ts";
import { createContainer } from "../../../src/container.ts";
import { createLogger } from "../../../src/log.ts";
import { RetryLater } from "../../../src/errors.ts";
import {
  queueAllRefreshes,
  refreshSocialAccount,
} from "../../../src/domain/social/refresh_service.ts";
import { listSocialPosts } from "../../../src/domain/social/social_service.ts";
import { socialState } from "../../../src/simulator/social_state.ts";

const HOUR_MS = 3_600_000;

/** A time 10 minutes into an hour window, so the window's end is 50 minutes away. */
function tenPastTheHour(): Date {
  return new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 10 * 60_000);
}

async function retryLaterOf(run: Promise<void>): Promise<RetryLater> {
  const err = await run.then(() => undefined, (e) => e);
  assert.ok(err instanceof RetryLater, `expected RetryLater, got ${err}`);
  return err;
}

for (const engine of ENGINES) {
  Deno.test({
    name:
      `[${engine}] a restart mid-refresh neither resets the quota nor loses the refresh's place`,
    sanitizeResources: engine === "sqlite",
    sanitizeOps: engine === "sqlite",
    fn: async () => {
      // 10 calls per hour: background refreshes may take 8.
      await using world = await startSocialWorld({
        engine,
        env: { SOCIAL_CALLS_PER_HOUR: "10" },
      });
      world.clock.set(tenPastTheHour());
      const id = nextUpstreamId("instagram");
      const now = Date.now();
      const account = await world.connect(
        { id, network: "instagram", username: "big", insightsGranted: true },
        Array.from({ length: 60 }, (_, i) => ({
          type: "image" as const,
          publishedAt: now - (i + 1) * HOUR_MS,
          insights: { reach: i },
        })),
      );
      // profile, account insights, stories, 3 media pages, 2 post insights.
      const first = await retryLaterOf(
        refreshSocialAccount(world.h.container, account.id),
      );
      assert.equal(first.delayMs, 50 * 60_000);
      assert.equal(world.calls(), 8);

      // A new process over the same database: the spent quota is remembered.
      await using restarted = createContainer(world.h.container.config, {
        clock: world.clock,
        log: createLogger("silent"),
      });
      const again = await retryLaterOf(
        refreshSocialAccount(restarted, account.id),
      );
      assert.equal(again.delayMs, 50 * 60_000);
      assert.equal(world.calls(), 8, "no upstream call with the quota spent");

      // The next window: the refresh resumes at the third post's insights.
      world.clock.advance(50 * 60_000);
      const log = socialState(world.sim.state).calls;
      await retryLaterOf(refreshSocialAccount(restarted, account.id));
      const resumed = log.slice(8);
      assert.equal(resumed.length, 8);
      assert.ok(
        resumed.every((c) => c.path.includes("/insights")),
        JSON.stringify(resumed.map((c) => c.path)),
      );
      world.clock.advance(HOUR_MS);
      // 60 posts need 60 insight calls: 2 + 8 done, 50 left over seven windows.
      for (let i = 0; i < 7; i++) {
        const run = refreshSocialAccount(restarted, account.id);
        if (i < 6) await retryLaterOf(run);
        else await run;
        world.clock.advance(HOUR_MS);
      }
      assert.equal(log.filter((c) => c.path.includes("/media")).length, 3);
      assert.equal(log.filter((c) => c.path.includes("/insights")).length, 61);
      const page = await listSocialPosts(restarted, {
        accountId: world.h.tenant.account.id,
        limit: 100,
      });
      assert.equal(page.items.length, 60);
      assert.ok(page.items.every((p) => typeof p.metrics.reach === "number"));
    },
  });
}

Deno.test("usage headers at 100 % and the upstream's rate-limit answer block calls, across restarts", async () => {
  await using world = await startSocialWorld();
  world.clock.set(tenPastTheHour());
  const id = nextUpstreamId("facebook");
  const account = await world.connect(
    { id, network: "facebook", username: "page", callsPerHour: 2 },
    [{ type: "text" }],
  );
  // The second answer reports 100 % usage: no third call is made.
  const full = await retryLaterOf(
    refreshSocialAccount(world.h.container, account.id),
  );
  assert.equal(world.calls(), 2);
  assert.equal(full.delayMs, 60_000);
  await using restarted = createContainer(world.h.container.config, {
    clock: world.clock,
    log: createLogger("silent"),
  });
  await retryLaterOf(refreshSocialAccount(restarted, account.id));
  assert.equal(world.calls(), 2, "no call while the block runs");

  // A minute later the simulator still refuses (80001, its own hour is not
  // over) and names the minutes until it lets calls in again.
  world.clock.advance(60_000);
  const refused = await retryLaterOf(
    refreshSocialAccount(restarted, account.id),
  );
  assert.equal(world.calls(), 3);
  assert.ok(refused.delayMs >= 60_000 && refused.delayMs <= HOUR_MS);
  assert.equal(
    refused.delayMs % 60_000,
    0,
    "whole minutes, as the upstream says",
  );
  world.clock.advance(refused.delayMs - 1_000);
  await retryLaterOf(refreshSocialAccount(world.h.container, account.id));
  assert.equal(world.calls(), 3, "no call before the upstream's time");
});

Deno.test("a cron tick queues one refresh per social account, and none while one is open", async () => {
  await using world = await startSocialWorld();
  const a = await world.connect({
    id: nextUpstreamId("instagram"),
    network: "instagram",
    username: "a",
  });
  const b = await world.connect({
    id: nextUpstreamId("facebook"),
    network: "facebook",
    username: "b",
  });
  const db = world.h.container.db;
  // Connecting queued a first refresh of each: the tick adds none.
  assert.equal(await queueAllRefreshes(world.h.container, "tick-1"), 0);
  await db.updateTable("jobs").set({ state: "completed" })
    .where("kind", "=", "social.refresh").execute();
  assert.equal(await queueAllRefreshes(world.h.container, "tick-2"), 2);
  assert.equal(await queueAllRefreshes(world.h.container, "tick-2"), 0);
  const jobs = await db.selectFrom("jobs").select(["payload", "state"])
    .where("kind", "=", "social.refresh").where("state", "=", "available")
    .execute();
  assert.deepEqual(
    jobs.map((j) => JSON.parse(j.payload).socialAccountId).sort(),
    [a.id, b.id].sort(),
  );
});

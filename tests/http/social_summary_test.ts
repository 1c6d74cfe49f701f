// GET /social/account/summary: the follower series is one stored snapshot
// per day; days before the first snapshot are absent, not zero.
import assert from "node:assert/strict";
import { nextUpstreamId, startSocialWorld } from "../_support/social.ts";
import { refreshSocialAccount } from "../../src/domain/social/refresh_service.ts";
import { addSocialAccount } from "../../src/simulator/social_control.ts";

const SUMMARY = "/api/v2/social/account/summary";
const DAY_MS = 86_400_000;

Deno.test("snapshots on distinct days build the follower series; earlier days are absent", async () => {
  await using world = await startSocialWorld();
  const { h, clock } = world;
  clock.set("2026-11-10T09:00:00.000Z");
  const id = nextUpstreamId("instagram");
  const account = await world.connect({
    id,
    network: "instagram",
    username: "shop",
    name: "Shop",
    followers: 100,
    follows: 7,
    insightsGranted: true,
    insights: { reach: 40, profile_views: 0 },
  }, [
    {
      type: "image",
      likes: 4,
      commentsCount: 1,
      publishedAt: Date.parse("2026-11-09T10:00:00Z"),
    },
    {
      type: "reel",
      likes: 0,
      commentsCount: 2,
      publishedAt: Date.parse("2026-11-11T10:00:00Z"),
    },
    {
      type: "image",
      likes: 9,
      publishedAt: Date.parse("2026-09-01T10:00:00Z"),
    },
  ]);
  const followersByDay: [string, number][] = [
    ["2026-11-10T09:00:00.000Z", 100],
    ["2026-11-10T21:00:00.000Z", 104], // same day: replaces the morning's
    ["2026-11-12T09:00:00.000Z", 110], // the 11th has no snapshot
    ["2026-11-13T09:00:00.000Z", 103],
  ];
  for (const [at, followers] of followersByDay) {
    clock.set(at);
    addSocialAccount(world.sim.state, {
      id,
      network: "instagram",
      username: "shop",
      followers,
    });
    await refreshSocialAccount(h.container, account.id);
  }

  const res = await h.request(
    "GET",
    `${SUMMARY}?since=2026-11-01&until=2026-11-13`,
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const [entry] = res.body.data.accounts;
  assert.equal(res.body.data.accounts.length, 1);
  assert.deepEqual(entry.period.followerSeries, [
    { date: "2026-11-10", followers: 104 },
    { date: "2026-11-12", followers: 110 },
    { date: "2026-11-13", followers: 103 },
  ]);
  assert.equal(entry.period.followerGrowth, -1);
  assert.equal(entry.period.postsPublished, 2);
  assert.equal(entry.period.likesTotal, 4);
  assert.equal(entry.period.commentsTotal, 3);
  assert.deepEqual(entry.current, {
    followersCount: 103,
    followsCount: 7,
    mediaCount: 3,
    capturedAt: "2026-11-13T09:00:00.000Z",
  });
  assert.equal(entry.channelId, account.id);
  // Three snapshots with reach 40; profile_views 0 is a real zero; website_clicks never given.
  assert.deepEqual(entry.insights, {
    reach: 120,
    profileVisits: 0,
    websiteClicks: null,
  });

  // A period wholly before the first snapshot has no series and no growth.
  const before = await h.request(
    "GET",
    `${SUMMARY}?since=2026-10-01&until=2026-11-09`,
  );
  const early = before.body.data.accounts[0];
  assert.deepEqual(early.period.followerSeries, []);
  assert.equal(early.period.followerGrowth, null);
  assert.deepEqual(early.insights, {
    reach: null,
    profileVisits: null,
    websiteClicks: null,
  });

  // Default period: the 30 days up to today.
  const defaults = await h.request("GET", SUMMARY);
  assert.equal(defaults.body.data.accounts[0].period.until, "2026-11-13");
  assert.equal(
    defaults.body.data.accounts[0].period.since,
    new Date(Date.parse("2026-11-13") - 30 * DAY_MS).toISOString().slice(0, 10),
  );
  const facebookOnly = await h.request("GET", `${SUMMARY}?network=facebook`);
  assert.deepEqual(facebookOnly.body.data.accounts, []);
});

Deno.test("an account not read yet has unknown totals, not zeros", async () => {
  await using world = await startSocialWorld();
  await world.connect({
    id: nextUpstreamId("facebook"),
    network: "facebook",
    username: "page",
  }, [{ type: "text", likes: 3 }]);
  const res = await world.h.request("GET", SUMMARY);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  const [entry] = res.body.data.accounts;
  assert.deepEqual(entry.current, {
    followersCount: null,
    followsCount: null,
    mediaCount: null,
    capturedAt: null,
  });
  assert.equal(entry.period.postsPublished, null);
  assert.equal(entry.period.likesTotal, null);
  assert.equal(entry.period.commentsTotal, null);
  assert.deepEqual(entry.period.followerSeries, []);
});

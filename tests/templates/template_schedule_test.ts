// When templates sync (issue 28, item 2) and what a channel can send: the
// cron tick's job queues a sync per WABA whose last one is older than
// TEMPLATE_SYNC_INTERVAL (one per tick, none beside an open one); each WABA
// has a Graph call budget; GET /templates?phoneNumberId lists what that
// channel can send (its WABA's templates, no other WABA's).
import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { ManualClock } from "../../src/clock.ts";
import { DEFAULT_SCHEDULES } from "../../src/cron/schedules.ts";
import { queueDueSyncs } from "../../src/domain/templates/template_sync_service.ts";
import {
  jobErrorOf,
  WABA_CALLS_PER_HOUR,
  wabaCall,
} from "../../src/domain/wabas/waba_call_service.ts";
import { updateWaba } from "../../src/domain/wabas/waba_repo.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import { createChannel } from "../../src/domain/channels/channel_service.ts";
import { AppError, RetryLater } from "../../src/errors.ts";
import { UpstreamError } from "../../src/upstream/graph_api.ts";
import { toDbTime } from "../../src/db/time.ts";
import { BACKGROUND_SHARE } from "../../src/domain/quota/call_quota.ts";

const HOUR = 3_600_000;

Deno.test("cron queues the template syncs every 10 minutes and the health checks hourly", () => {
  const kinds = new Map(DEFAULT_SCHEDULES.map((s) => [s.kind, s.pattern]));
  assert.equal(kinds.get("templates.sync_due"), "*/10 * * * *");
  assert.equal(kinds.get("channels.health_all"), "30 * * * *");
});

engineTest(
  "a sync is queued for each WABA last synced TEMPLATE_SYNC_INTERVAL ago, one at a time",
  async (h) => {
    const clock = h.clock as ManualClock;
    const deps = { db: h.container.db, clock };
    const wabaId = h.tenant.channel.wabaId;
    const interval = 6 * HOUR;
    const syncJobs = () =>
      h.container.db.selectFrom("jobs").select(["unique_key", "state"])
        .where("kind", "=", "templates.sync").execute();
    // Never synced: due.
    assert.equal(
      await queueDueSyncs(deps, { tickKey: "t1", intervalMs: interval }),
      1,
    );
    assert.deepEqual((await syncJobs()).map((j) => j.unique_key), [
      `templates.sync:${wabaId}:t1`,
    ]);
    // The next tick while it waits: nothing more.
    assert.equal(
      await queueDueSyncs(deps, { tickKey: "t2", intervalMs: interval }),
      0,
    );
    await h.container.db.updateTable("jobs").set({ state: "completed" })
      .where("kind", "=", "templates.sync").execute();
    // Synced now: not due for six hours.
    await updateWaba(h.container.db, wabaId, {
      templates_synced_at: toDbTime(clock.now()),
      templates_sync_attempted_at: toDbTime(clock.now()),
    });
    clock.advance(interval - 60_000);
    assert.equal(
      await queueDueSyncs(deps, { tickKey: "t3", intervalMs: interval }),
      0,
    );
    clock.advance(120_000);
    assert.equal(
      await queueDueSyncs(deps, { tickKey: "t4", intervalMs: interval }),
      1,
    );
    await h.container.db.updateTable("jobs").set({ state: "discarded" })
      .where("kind", "=", "templates.sync").execute();
    // It failed just now: tried again an hour later, not every tick.
    await updateWaba(h.container.db, wabaId, {
      templates_sync_attempted_at: toDbTime(clock.now()),
      templates_sync_error: "Graph API rejected ... (Meta error 190)",
    });
    clock.advance(30 * 60_000);
    assert.equal(
      await queueDueSyncs(deps, { tickKey: "t5", intervalMs: interval }),
      0,
    );
    clock.advance(31 * 60_000);
    assert.equal(
      await queueDueSyncs(deps, { tickKey: "t6", intervalMs: interval }),
      1,
    );
  },
);

engineTest(
  "each WABA has a Graph call budget per hour: background work stops at its share, a command may use the rest",
  async (h) => {
    const deps = h.container;
    const wabaId = h.tenant.channel.wabaId;
    const background = Math.floor(WABA_CALLS_PER_HOUR * BACKGROUND_SHARE);
    let calls = 0;
    const call = () =>
      wabaCall(deps, { wabaId, mode: "background" }, () => {
        calls++;
        return Promise.resolve();
      });
    for (let i = 0; i < background; i++) await call();
    const spent = await call().catch((e) => e);
    assert.ok(spent instanceof AppError && spent.code === "RATE_LIMITED");
    assert.ok(spent.retryAfterMs! > 0 && spent.retryAfterMs! <= HOUR);
    assert.equal(calls, background, "no call made past the budget");
    // The job gives it back for that long without spending an attempt.
    const later = jobErrorOf(spent);
    assert.ok(later instanceof RetryLater);
    assert.equal(later.delayMs, spent.retryAfterMs);
    // An operator's command still has the rest of the hour's calls.
    await wabaCall(deps, { wabaId, mode: "live" }, () => Promise.resolve());
    // Another WABA has its own.
    const other = await h.makeTenant("budget-other");
    await wabaCall(
      deps,
      { wabaId: other.channel.wabaId, mode: "background" },
      () => Promise.resolve(),
    );
    // A new hour, a new budget.
    (h.clock as ManualClock).advance(HOUR);
    await call();
  },
);

engineTest(
  "Meta's rate limit (80007) on a WABA's call stops its calls for the wait Meta names",
  async (h) => {
    const deps = h.container;
    const wabaId = h.tenant.channel.wabaId;
    const throttled = new UpstreamError(
      "Graph API rejected the read: (#80007)",
      {
        category: "throttled_waba",
        upstreamCode: 80007,
        throttled: true,
        retryable: true,
        retryAfterMs: 60_000,
      },
    );
    const failed = await wabaCall(
      deps,
      { wabaId, mode: "live" },
      () => Promise.reject(throttled),
    ).catch((e) => e);
    assert.equal(failed, throttled);
    let called = false;
    const blocked = await wabaCall(deps, { wabaId, mode: "live" }, () => {
      called = true;
      return Promise.resolve();
    }).catch((e) => e);
    assert.equal(called, false);
    assert.equal(blocked.code, "RATE_LIMITED");
    assert.equal(blocked.retryAfterMs, 60_000);
    (h.clock as ManualClock).advance(60_000);
    await wabaCall(deps, { wabaId, mode: "live" }, () => Promise.resolve());
  },
);

engineTest(
  "Meta's verification handshake marks every channel's webhook verified",
  async (h) => {
    const before = await h.request("GET", "/api/v2/channels");
    assert.equal(before.body.data[0].webhookVerified, false);
    const bad = await h.request(
      "GET",
      "/meta/webhook?hub.mode=subscribe&hub.verify_token=wrong&hub.challenge=42",
      { key: null },
    );
    assert.equal(bad.status, 403);
    assert.equal(
      (await h.request("GET", "/api/v2/channels")).body.data[0].webhookVerified,
      false,
    );
    const ok = await h.request(
      "GET",
      "/meta/webhook?hub.mode=subscribe&hub.verify_token=test-verify-token&hub.challenge=42",
      { key: null },
    );
    assert.equal(ok.status, 200);
    assert.equal(ok.body, 42);
    assert.equal(
      (await h.request("GET", "/api/v2/channels")).body.data[0].webhookVerified,
      true,
    );
  },
);

engineTest(
  "GET /templates?phoneNumberId lists what that channel can send: its WABA's templates, never another WABA's",
  async (h) => {
    const { account, channel } = h.tenant;
    const elsewhere = await createChannel(h.container, {
      accountId: account.id,
      phoneNumber: "+15550199999",
      displayName: "Other WABA",
      upstreamPhoneNumberId: "106540352249990",
      wabaId: "999000111222333",
      accessToken: "t",
    });
    const make = async (name: string, extra: Record<string, unknown> = {}) =>
      await createTemplate(h.container, {
        accountId: account.id,
        name,
        language: "en_US",
        category: "UTILITY",
        status: "approved",
        components: [{ type: "BODY", text: "Hi" }],
        ...extra,
      });
    const mine = await make("of_my_waba");
    const theirs = await make("of_their_waba");
    const global = await make("hand_made");
    const own = await make("channel_own", { channelId: channel.id });
    for (
      const [t, waba] of [[mine, channel.wabaId], [
        theirs,
        elsewhere.wabaId,
      ]] as const
    ) {
      await h.container.db.updateTable("templates")
        .set({ waba_id: waba, source: "meta" }).where("id", "=", t.id)
        .execute();
    }
    const list = async (channelId: string) =>
      (await h.request(
        "GET",
        `/api/v2/templates?phoneNumberId=${channelId}&pageSize=100`,
      ))
        .body.data.map((t: { name: string }) => t.name).sort();
    assert.deepEqual(await list(channel.id), [
      "channel_own",
      "hand_made",
      "of_my_waba",
    ]);
    assert.deepEqual(await list(elsewhere.id), ["hand_made", "of_their_waba"]);
    const all = await h.request("GET", "/api/v2/templates?pageSize=100");
    assert.equal(all.body.data.length, 4);
    const synced = all.body.data.find((t: { id: string }) => t.id === mine.id);
    assert.equal(synced.wabaId, channel.wabaId);
    assert.equal(synced.phoneNumberId, null);
    assert.equal(synced.source, "meta");
    void global;
    void own;
    // A send through the other WABA's channel cannot use this WABA's template.
    const res = await h.request("POST", "/api/v2/messages", {
      body: {
        phoneNumberId: elsewhere.id,
        to: "+5491155500099",
        type: "template",
        template: { name: "of_my_waba", language: { code: "en_US" } },
      },
    });
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, "TEMPLATE_NOT_FOUND");
  },
);

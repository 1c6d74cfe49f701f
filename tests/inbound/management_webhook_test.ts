// Meta's management webhooks (issue 28, item 3) on /meta/webhook, from the
// reference's payload samples: routed by entry[].id, stored with their
// value, applied by a job, once per (WABA, field, value), an older event
// changing nothing, ids past 2^53 kept exact.
import assert from "node:assert/strict";
import { syncWabaTemplates } from "../../src/domain/templates/template_sync_service.ts";
import { createChannel } from "../../src/domain/channels/channel_service.ts";
import { listMetaEvents } from "../../src/domain/inbound/meta_event_repo.ts";
import { metaTest, type MetaWorld } from "../_support/meta.ts";
import * as F from "../_support/meta_fixtures.ts";

async function synced(w: MetaWorld) {
  await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
  return await w.templates();
}

async function events(w: MetaWorld) {
  return await listMetaEvents(w.container.db, w.wabaId);
}

metaTest(
  "message_template_status_update (pywa's REJECTED sample) rejects the template with Meta's reason",
  async (w) => {
    await w.sim("/templates/abandoned_cart/status", {
      wabaId: w.wabaId,
      status: "APPROVED",
      // Approved at Meta long before the sample's rejection.
      time: 1_700_000_000,
    });
    assert.equal(
      (await synced(w)).get("abandoned_cart/en")!.status,
      "approved",
    );
    assert.equal(
      await w.postWebhook(forTenant(F.TEMPLATE_STATUS_REJECTED, w)),
      200,
    );
    const row = (await w.templates()).get("abandoned_cart/en")!;
    assert.equal(row.status, "rejected");
    assert.equal(row.meta_status, "REJECTED");
    assert.equal(row.rejected_reason, "INVALID_FORMAT");
    assert.equal(row.status_event_at, 1751247548);
    const stored = (await events(w)).find((e) => e.entry_time === 1751247548);
    assert.equal(stored!.field, "message_template_status_update");
    assert.equal(stored!.outcome, "applied");
    assert.equal(stored!.event, "REJECTED");
    assert.equal(stored!.subject, row.id);
    // The value as received: its integer id as Meta wrote it.
    assert.match(stored!.value, /"message_template_id":1689556908129835,/);
  },
);

metaTest(
  "message_template_quality_update (pywa's sample) sets the quality score",
  async (w) => {
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      templates: [{
        id: "806312974732579",
        name: "welcome_template",
        language: "en_US",
        components: [{ type: "BODY", text: "Welcome" }],
      }],
    });
    await synced(w);
    await w.postWebhook(forTenant(F.TEMPLATE_QUALITY, w));
    const row = (await w.templates()).get("welcome_template/en_US")!;
    assert.equal(row.quality_score, "YELLOW");
    assert.equal(row.status, "approved", "quality does not change the status");
  },
);

metaTest(
  "message_template_components_update (pywa's sample) reads the edited template again",
  async (w) => {
    await synced(w);
    const edited = [{
      type: "BODY",
      text: "Thank you for your order, {{1}}! …",
    }];
    await w.sim("/templates/order_confirmation/components", {
      wabaId: w.wabaId,
      components: edited,
    });
    await w.postWebhook(forTenant(F.TEMPLATE_COMPONENTS, w));
    const row = (await w.templates()).get("order_confirmation/en_US")!;
    assert.deepEqual(JSON.parse(row.components), edited);
    assert.equal(row.meta_template_id, "17841400000000001");
    assert.equal((await events(w))[0]!.outcome, "refresh_queued");
  },
);

metaTest(
  "template_category_update (pywa's sample) changes the category and keeps the previous",
  async (w) => {
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      templates: [{
        id: "12345678",
        name: "my_message_template",
        language: "he",
        category: "UTILITY",
        components: [{ type: "BODY", text: "שלום" }],
      }],
    });
    await synced(w);
    await w.postWebhook(forTenant(F.TEMPLATE_CATEGORY, w));
    const row = (await w.templates()).get("my_message_template/he")!;
    assert.equal(row.category, "MARKETING");
    assert.equal(row.previous_category, "UTILITY");
  },
);

/** A second number of the tenant's WABA: the one Meta's number samples name. */
async function luckyShrub(w: MetaWorld) {
  const channel = await createChannel(w.container, {
    accountId: w.tenant.account.id,
    phoneNumber: "+15550783881",
    displayName: "Lucky",
    upstreamPhoneNumberId: "106540352249999",
    wabaId: w.wabaId,
    accessToken: "token-lucky",
  });
  await w.sim("/numbers", {
    phoneNumberId: "106540352249999",
    displayPhoneNumber: "+15550783881",
    wabaId: w.wabaId,
  });
  return channel;
}

metaTest(
  "phone_number_quality_update (Meta's sample) keeps the limit and reads the number again: HIGH throughput",
  async (w) => {
    const channel = await luckyShrub(w);
    await fetch(`${w.simulator.url}/_sim/numbers/106540352249999/health`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        throughput: "HIGH",
        quality_rating: "YELLOW",
        time: 1_700_000_000,
      }),
    }).then((r) => r.body?.cancel());
    await w.postWebhook(forTenant(F.NUMBER_QUALITY, w));
    const res = await w.request("GET", "/api/v2/channels");
    const lucky = res.body.data.find((c: { id: string }) =>
      c.id === channel.id
    );
    assert.equal(lucky.throughputLevel, "HIGH");
    assert.equal(lucky.qualityRating, "YELLOW");
    assert.ok(lucky.healthCheckedAt);
    // The simulator's health post announced TIER_2K; Meta's sample names TIER_UNLIMITED
    // and the health read (TIER_2K) came after it.
    assert.equal(lucky.messagingLimit, "TIER_2K");
    const stored = (await events(w)).find((e) =>
      e.field === "phone_number_quality_update" && e.entry_time === 1748454394
    );
    assert.equal(stored?.outcome, "applied");
    assert.equal(stored?.subject, channel.id);
  },
);

metaTest(
  "phone_number_name_update (Meta's sample) makes the approved name the channel's",
  async (w) => {
    const channel = await luckyShrub(w);
    await w.postWebhook(forTenant(F.NUMBER_NAME, w));
    const row = await w.container.db.selectFrom("channels").selectAll()
      .where("id", "=", channel.id).executeTakeFirstOrThrow();
    assert.equal(row.display_name, "Lucky Shrub");
    assert.equal(row.name_status, "APPROVED");
  },
);

metaTest(
  "account_alerts (Meta's sample) is stored for the operator",
  async (w) => {
    assert.equal(await w.postWebhook(forTenant(F.ACCOUNT_ALERT, w)), 200);
    const [stored] = await events(w);
    assert.equal(stored!.field, "account_alerts");
    assert.equal(stored!.outcome, "recorded");
    assert.equal(stored!.event, "INCREASED_CAPABILITIES_ELIGIBILITY_DEFERRED");
    assert.equal(stored!.subject, "506914307656634");
    assert.match(stored!.note ?? "", /WARNING/);
  },
);

metaTest(
  "a duplicate changes nothing and an older event is stale",
  async (w) => {
    await synced(w);
    const status = (event: string, time: number) =>
      `{"object":"whatsapp_business_account","entry":[{"id":"${w.wabaId}","time":${time},"changes":[{"field":"message_template_status_update","value":{"event":"${event}","message_template_id":1689556908129801,"message_template_name":"order_update","message_template_language":"es_AR","reason":"NONE"}}]}]}`;
    const latest = async () => (await events(w))[0]!;
    await w.postWebhook(status("PAUSED", 2_000_000_100));
    assert.equal(
      (await w.templates()).get("order_update/es_AR")!.status,
      "paused",
    );
    // Meta retries, and sends a copy to every subscribed app: the same change.
    await w.postWebhook(status("PAUSED", 2_000_000_100));
    assert.equal((await events(w)).length, 1, "stored and applied once");
    // An APPROVED from before the pause arrives late: it changes nothing.
    await w.postWebhook(status("APPROVED", 2_000_000_050));
    let row = (await w.templates()).get("order_update/es_AR")!;
    assert.equal(row.status, "paused");
    assert.equal(row.status_event_at, 2_000_000_100);
    assert.equal((await latest()).outcome, "stale");
    // A later one applies, and so does the same value later still (approved,
    // paused, approved again: Meta's two APPROVED values are the same).
    await w.postWebhook(status("APPROVED", 2_000_000_200));
    assert.equal((await latest()).outcome, "applied");
    await w.postWebhook(status("PAUSED", 2_000_000_300));
    await w.postWebhook(status("APPROVED", 2_000_000_400));
    row = (await w.templates()).get("order_update/es_AR")!;
    assert.equal(row.status, "approved");
    assert.equal(row.status_event_at, 2_000_000_400);
    assert.equal((await events(w)).length, 5);
  },
);

metaTest(
  "an unknown template id in a status webhook is read from Meta, exact past 2^53",
  async (w) => {
    await synced(w);
    // Meta made a template the sync has not seen yet, with an id past 2^53.
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      templates: [{
        id: "17841400000000003",
        name: "late_arrival",
        language: "en_US",
        status: "APPROVED",
        components: [{ type: "BODY", text: "Hi" }],
      }],
    });
    await w.postWebhook(
      `{"object":"whatsapp_business_account","entry":[{"id":"${w.wabaId}","time":2000000000,"changes":[{"field":"message_template_status_update","value":{"event":"APPROVED","message_template_id":17841400000000003,"message_template_name":"late_arrival","message_template_language":"en_US","reason":"NONE"}}]}]}`,
    );
    const row = (await w.templates()).get("late_arrival/en_US")!;
    // JSON.parse reads the number as 17841400000000004.
    assert.equal(row.meta_template_id, "17841400000000003");
    assert.equal(row.status, "approved");
    const stored = (await events(w))[0]!;
    assert.equal(stored.outcome, "unknown_template");
    const refresh = (await w.calls()).filter((c) =>
      c.path.startsWith("/v22.0/17841400000000003")
    );
    assert.equal(refresh.length, 1, "read by its exact id");
  },
);

metaTest(
  "an unknown field, an unknown WABA and a value of another shape are stored and answered 200",
  async (w) => {
    assert.equal(await w.postWebhook(forTenant(F.BUSINESS_CAPABILITY, w)), 200);
    assert.equal(
      await w.postWebhook(
        `{"object":"whatsapp_business_account","entry":[{"id":"${w.wabaId}","time":1,"changes":[{"field":"brand_new_field","value":{"x":1}}]}]}`,
      ),
      200,
    );
    assert.equal(
      await w.postWebhook(
        `{"object":"whatsapp_business_account","entry":[{"id":"${w.wabaId}","time":1,"changes":[{"field":"account_update","value":"not an object"}]}]}`,
      ),
      200,
    );
    assert.equal(
      await w.postWebhook(F.ACCOUNT_ALERT),
      200,
      "the reference's own WABA",
    );
    const ours = await events(w);
    assert.deepEqual(
      ours.map((e) => [e.field, e.outcome]).sort(),
      [
        ["account_update", "unreadable"],
        ["brand_new_field", "recorded"],
        ["business_capability_update", "recorded"],
      ],
    );
    const theirs = await listMetaEvents(w.container.db, F.REFERENCE_WABA);
    assert.deepEqual(theirs.map((e) => [e.outcome, e.note, e.account_id]), [[
      "recorded",
      "unknown WhatsApp Business Account",
      null,
    ]]);
    const jobs = await w.container.db.selectFrom("jobs").select("state")
      .where("kind", "=", "meta.inbound").execute();
    assert.ok(jobs.every((j) => j.state === "completed"), JSON.stringify(jobs));
  },
);

function forTenant(text: string, w: MetaWorld): string {
  return F.forWaba(text, w.wabaId);
}

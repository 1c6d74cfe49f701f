// Templates synced from Meta (issue 28, item 1): paged on cursors, all or
// nothing, Meta's statuses mapped onto the spec's five, removed ones
// disabled, hand-made ones replaced, ids stable and exact.
import assert from "node:assert/strict";
import {
  syncWabaTemplates,
  TEMPLATE_PAGE_SIZE,
} from "../../src/domain/templates/template_sync_service.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import { UpstreamError } from "../../src/upstream/graph_api.ts";
import { enqueue } from "../../src/jobs/queue.ts";
import { metaTest, type MetaWorld } from "../_support/meta.ts";

function sync(w: MetaWorld) {
  return syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
}

metaTest(
  "a sync reads three pages on Meta's cursors and keeps ids across syncs",
  async (w) => {
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      generate: { count: 250, prefix: "campaign" },
    });
    const first = await sync(w);
    assert.equal(first.pages, 3);
    assert.equal(first.templates, 250);
    assert.equal(first.created, 250);
    const reads = (await w.calls()).filter((c) =>
      c.path.includes("/message_templates")
    );
    assert.equal(reads.length, 3);
    for (const read of reads) {
      assert.match(read.path, new RegExp(`limit=${TEMPLATE_PAGE_SIZE}`));
    }
    assert.doesNotMatch(reads[0]!.path, /after=/);
    assert.match(reads[1]!.path, /after=/);
    assert.match(reads[2]!.path, /after=/);
    const before = await w.templates();
    assert.equal(before.size, 250);
    const row = before.get("campaign_0001/en_US")!;
    assert.equal(row.waba_id, w.wabaId);
    assert.equal(row.source, "meta");
    assert.equal(row.status, "approved");
    assert.equal(row.meta_status, "APPROVED");

    const again = await sync(w);
    assert.equal(again.created, 0);
    assert.equal(again.updated, 0, "nothing changed at Meta");
    const after = await w.templates();
    for (const [key, r] of before) assert.equal(after.get(key)!.id, r.id, key);
  },
  { seed: "empty" },
);

metaTest(
  "a page that fails writes nothing and the error names Meta's code",
  async (w) => {
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      generate: { count: 250, prefix: "campaign" },
    });
    await sync(w);
    const before = await w.templates();
    // Meta changes things, then the third page of the next sync fails.
    await w.sim("/templates/campaign_0001/status", {
      wabaId: w.wabaId,
      status: "PAUSED",
    });
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      generate: { count: 1, prefix: "brand_new" },
    });
    await w.sim("/management/fail", {
      code: 80007,
      path: "/message_templates",
      skip: 2,
    });
    const err = await sync(w).catch((e) => e);
    assert.ok(err instanceof UpstreamError, String(err));
    assert.equal(err.upstreamCode, 80007);
    const after = await w.templates();
    assert.deepEqual(
      [...after.values()].map((r) => [r.id, r.status, r.updated_at]).sort(),
      [...before.values()].map((r) => [r.id, r.status, r.updated_at]).sort(),
      "the previous templates are untouched",
    );
    const waba = await w.container.db.selectFrom("wabas").selectAll()
      .where("id", "=", w.wabaId).executeTakeFirstOrThrow();
    assert.match(waba.templates_sync_error ?? "", /Meta error 80007/);
    assert.match(waba.templates_sync_error ?? "", /rate limit/);
  },
  { seed: "empty" },
);

const MAPPING: [string, string][] = [
  ["APPROVED", "approved"],
  ["PENDING", "pending"],
  ["IN_APPEAL", "pending"],
  ["REJECTED", "rejected"],
  ["PAUSED", "paused"],
  ["DISABLED", "disabled"],
  ["DELETED", "disabled"],
  ["PENDING_DELETION", "disabled"],
  ["ARCHIVED", "disabled"],
  ["LIMIT_EXCEEDED", "disabled"],
  ["SOMETHING_NEW", "disabled"],
  ["LOCKED", "approved"],
];

metaTest(
  "every Meta status maps onto one of the spec's five, Meta's kept beside it",
  async (w) => {
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      templates: MAPPING.map(([meta], i) => ({
        name: `status_${i}`,
        language: "en_US",
        status: meta,
        components: [{ type: "BODY", text: "Hi" }],
      })),
    });
    await sync(w);
    const rows = await w.templates();
    for (const [i, [meta, ours]] of MAPPING.entries()) {
      const row = rows.get(`status_${i}/en_US`)!;
      assert.equal(row.status, ours, meta);
      assert.equal(row.meta_status, meta, meta);
    }
  },
  { seed: "empty" },
);

metaTest(
  "a template Meta no longer returns becomes disabled and is kept",
  async (w) => {
    await sync(w);
    const before = (await w.templates()).get("coupon_offer/en_US")!;
    assert.equal(before.status, "approved");
    await fetch(
      `${w.simulator.url}/_sim/wabas/${w.wabaId}/templates/coupon_offer`,
      { method: "DELETE" },
    ).then((r) => r.body?.cancel());
    const summary = await sync(w);
    assert.equal(summary.disabled, 1);
    const after = (await w.templates()).get("coupon_offer/en_US")!;
    assert.equal(after.id, before.id);
    assert.equal(after.status, "disabled");
    assert.equal(after.meta_status, "DELETED");
    assert.equal((await sync(w)).disabled, 0, "disabled once");
  },
);

metaTest(
  "the demo WABA syncs every shape as Meta returns it, ids exact",
  async (w) => {
    const summary = await sync(w);
    assert.ok(summary.templates > 25, "more than Meta's default page");
    const rows = await w.templates();
    const named = rows.get("order_confirmation/en_US")!;
    // Past 2^53: a JSON number would read 17841400000000000.
    assert.equal(named.meta_template_id, "17841400000000001");
    assert.equal(named.parameter_format, "NAMED");
    const components = JSON.parse(named.components);
    assert.equal(components[0].format, "IMAGE");
    assert.deepEqual(
      components[1].example.body_text_named_params[0],
      { param_name: "first_name", example: "Pablo" },
    );
    assert.equal(rows.get("summer_sale/en_US")!.status, "paused");
    assert.equal(rows.get("summer_sale/en_US")!.quality_score, "RED");
    assert.equal(
      rows.get("abandoned_cart/en")!.rejected_reason,
      "INVALID_FORMAT",
    );
    assert.equal(rows.get("appointment_reminder/es_AR")!.status, "pending");
    assert.equal(
      rows.get("order_update/es_AR")!.parameter_format,
      "POSITIONAL",
    );
  },
);

metaTest(
  "a synced template replaces a hand-made one of the same name and language",
  async (w) => {
    const local = await createTemplate(w.container, {
      accountId: w.tenant.account.id,
      channelId: w.tenant.channel.id,
      name: "order_update",
      language: "es_AR",
      category: "MARKETING",
      status: "approved",
      components: [{ type: "BODY", text: "Hola {{1}}" }],
    });
    const other = await createTemplate(w.container, {
      accountId: w.tenant.account.id,
      name: "only_here",
      language: "en_US",
      category: "UTILITY",
      status: "approved",
      components: [{ type: "BODY", text: "Hi" }],
    });
    await sync(w);
    const rows = await w.templates();
    const taken = rows.get("order_update/es_AR")!;
    assert.equal(taken.id, local.id, "the same row, now Meta's");
    assert.equal(taken.source, "meta");
    assert.equal(taken.waba_id, w.wabaId);
    assert.equal(taken.channel_id, null);
    assert.equal(taken.category, "UTILITY");
    assert.equal(
      JSON.parse(taken.components)[0].text,
      "Hola {{1}}, tu pedido {{2}} está en camino.",
    );
    const kept = rows.get("only_here/en_US")!;
    assert.equal(kept.id, other.id);
    assert.equal(kept.source, "local");
    assert.equal(
      kept.status,
      "approved",
      "a template Meta never had is left alone",
    );
  },
);

metaTest(
  "a sync job that Meta refuses fails naming Meta's code, and changes nothing",
  async (w) => {
    await sync(w);
    const before = await w.templates();
    await w.sim("/management/fail", { code: 190, path: "/message_templates" });
    await enqueue(w.container.db, {
      kind: "templates.sync",
      payload: { wabaId: w.wabaId },
    }, w.clock.now());
    await w.settle();
    const job = await w.container.db.selectFrom("jobs").selectAll()
      .where("kind", "=", "templates.sync").executeTakeFirstOrThrow();
    assert.equal(job.state, "discarded", "190 is not retried");
    const [error] = JSON.parse(job.errors) as { error: string }[];
    assert.match(
      error!.error,
      /\(Meta error 190\): the access token is invalid or expired/,
    );
    assert.deepEqual(
      [...(await w.templates()).values()].map((r) => r.updated_at),
      [...before.values()].map((r) => r.updated_at),
    );
  },
);

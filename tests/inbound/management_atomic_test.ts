// Management webhooks are applied without an interactive transaction on
// libSQL (issue 30): each change's row, what it applies and the jobs it
// queues go in one batch after its reads, guarded on what it read (the
// duplicate check, the template's, channel's or WABA's event watermark).
import assert from "node:assert/strict";
import { syncWabaTemplates } from "../../src/domain/templates/template_sync_service.ts";
import {
  applyManagementChanges,
  type ManagementDeps,
} from "../../src/domain/inbound/management_service.ts";
import { listMetaEvents } from "../../src/domain/inbound/meta_event_repo.ts";
import { metaTest, type MetaWorld } from "../_support/meta.ts";
import * as F from "../_support/meta_fixtures.ts";
import { anotherInstance, racing } from "../_support/race.ts";

let posts = 0;

/** Applies a management webhook's changes as the meta.inbound job does. */
function apply(
  deps: ManagementDeps,
  w: MetaWorld,
  text: string,
): Promise<number> {
  return applyManagementChanges(deps, {
    payloadId: `payload-${++posts}`,
    body: F.forWaba(text, w.wabaId),
  });
}

function status(w: MetaWorld, event: string, time: number): string {
  return `{"object":"whatsapp_business_account","entry":[{"id":"${w.wabaId}","time":${time},"changes":[{"field":"message_template_status_update","value":{"event":"${event}","message_template_id":1689556908129801,"message_template_name":"order_update","message_template_language":"es_AR","reason":"NONE"}}]}]}`;
}

async function orderUpdate(w: MetaWorld) {
  return (await w.templates()).get("order_update/es_AR")!;
}

metaTest(
  "template and account changes apply with no transaction on libSQL, a duplicate once",
  async (w) => {
    if (w.container.dbBatch) w.container.dbBatch.forbidTransactions = true;
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    const c = w.container;
    assert.equal(await apply(c, w, status(w, "PAUSED", 2_000_000_100)), 1);
    assert.equal((await orderUpdate(w)).status, "paused");
    assert.equal(await apply(c, w, status(w, "PAUSED", 2_000_000_100)), 0);
    assert.equal(await apply(c, w, status(w, "APPROVED", 2_000_000_200)), 1);
    assert.equal((await orderUpdate(w)).status, "approved");
    assert.equal(await apply(c, w, F.TEMPLATE_COMPONENTS), 1);
    assert.equal(await apply(c, w, F.ACCOUNT_RESTRICTION), 1);
    assert.equal(await apply(c, w, F.ACCOUNT_ALERT), 0, "recorded only");
    const events = await listMetaEvents(c.db, w.wabaId);
    assert.deepEqual(
      events.map((e) => [e.field, e.outcome]).sort(),
      [
        ["account_alerts", "recorded"],
        ["account_update", "applied"],
        ["message_template_components_update", "refresh_queued"],
        ["message_template_status_update", "applied"],
        ["message_template_status_update", "applied"],
      ],
    );
    const refresh = await c.db.selectFrom("jobs").select("kind")
      .where("kind", "=", "template.refresh").execute();
    assert.equal(refresh.length, 1);
    const waba = await c.db.selectFrom("wabas").select("restrictions")
      .where("id", "=", w.wabaId).executeTakeFirstOrThrow();
    assert.match(waba.restrictions, /RESTRICTED_BIZ_INITIATED_MESSAGING/);
  },
);

metaTest(
  "a copy another instance stores between a change's reads and its batch makes it a duplicate: applied once, one job",
  async (w) => {
    if (w.container.dbBatch) w.container.dbBatch.forbidTransactions = true;
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    const libsql = w.container.engine === "libsql";
    let other = -1;
    // Meta sends the change to every subscribed app: the other instance
    // stores and applies its copy while this one is between reads and batch.
    const race = racing(w.container, async () => {
      other = await apply(
        anotherInstance(w.container),
        w,
        F.TEMPLATE_COMPONENTS,
      );
    });
    const applied = await apply(
      { ...w.container, ...race },
      w,
      F.TEMPLATE_COMPONENTS,
    );
    assert.equal(race.plans, libsql ? 2 : 1);
    assert.equal(applied + Math.max(other, 0), 1, "applied by one of them");
    assert.equal((await listMetaEvents(w.container.db, w.wabaId)).length, 1);
    const refresh = await w.container.db.selectFrom("jobs").select("kind")
      .where("kind", "=", "template.refresh").execute();
    assert.equal(refresh.length, 1, "one read of the template queued");
  },
);

metaTest(
  "a later status applied between an earlier one's reads and its batch wins: the earlier is planned again and is stale",
  async (w) => {
    if (w.container.dbBatch) w.container.dbBatch.forbidTransactions = true;
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    const libsql = w.container.engine === "libsql";
    const race = racing(w.container, async () => {
      await apply(
        anotherInstance(w.container),
        w,
        status(w, "PAUSED", 2_000_000_300),
      );
    });
    await apply(
      { ...w.container, ...race },
      w,
      status(w, "REJECTED", 2_000_000_200),
    );
    assert.equal(race.plans, libsql ? 2 : 1);
    const row = await orderUpdate(w);
    if (libsql) {
      assert.equal(row.status, "paused", "the later event's status");
      assert.equal(row.status_event_at, 2_000_000_300);
      const outcomes = (await listMetaEvents(w.container.db, w.wabaId))
        .map((e) => [e.entry_time, e.outcome]).sort();
      assert.deepEqual(outcomes, [
        [2_000_000_200, "stale"],
        [2_000_000_300, "applied"],
      ]);
    } else assert.equal(row.status, "rejected");
  },
);

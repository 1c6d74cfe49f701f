// Template syncs write without an interactive transaction on libSQL (issue
// 30): a WABA's sync is one atomic batch after its reads, guarded on the
// rows it read, and planned again when another writer moved them.
import assert from "node:assert/strict";
import {
  refreshTemplate,
  syncWabaTemplates,
} from "../../src/domain/templates/template_sync_service.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import { ensureWaba } from "../../src/domain/wabas/waba_repo.ts";
import { toDbTime } from "../../src/db/time.ts";
import { anotherInstance, racing } from "../_support/race.ts";
import { metaTest, type MetaWorld } from "../_support/meta.ts";

function forbidTransactions(w: MetaWorld): void {
  if (w.container.dbBatch) w.container.dbBatch.forbidTransactions = true;
}

metaTest(
  "a sync and both refreshes write with no transaction on libSQL",
  async (w) => {
    forbidTransactions(w);
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      generate: { count: 120, prefix: "promo" },
    });
    const summary = await syncWabaTemplates(w.container, w.wabaId, {
      mode: "live",
    });
    assert.equal(summary.created, 120);
    assert.equal(summary.pages, 2);
    const row = (await w.templates()).get("promo_0001/en_US")!;

    await w.sim("/templates/promo_0001/status", {
      wabaId: w.wabaId,
      status: "PAUSED",
    });
    const byId = await refreshTemplate(w.container, {
      wabaId: w.wabaId,
      metaTemplateId: row.meta_template_id!,
      mode: "live",
    });
    assert.equal(byId.updated, 1);
    assert.equal(
      (await w.templates()).get("promo_0001/en_US")!.status,
      "paused",
    );

    await w.sim("/templates/promo_0002/status", {
      wabaId: w.wabaId,
      status: "REJECTED",
    });
    const byName = await refreshTemplate(w.container, {
      wabaId: w.wabaId,
      name: "promo_0002",
      mode: "live",
    });
    assert.equal(byName.updated, 1);
    const after = await w.templates();
    assert.equal(after.get("promo_0002/en_US")!.status, "rejected");
    assert.equal(after.size, 120);
    const waba = await w.container.db.selectFrom("wabas")
      .select(["templates_synced_at", "templates_sync_error"])
      .where("id", "=", w.wabaId).executeTakeFirstOrThrow();
    assert.notEqual(waba.templates_synced_at, null);
    assert.equal(waba.templates_sync_error, null);
  },
  { seed: "empty" },
);

metaTest(
  "a sync that another sync of the WABA overtakes between its reads and its batch is planned again: each template once, none created twice",
  async (w) => {
    forbidTransactions(w);
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      generate: { count: 30, prefix: "promo" },
    });
    const libsql = w.container.engine === "libsql";
    let other: Awaited<ReturnType<typeof syncWabaTemplates>> | undefined;
    // This sync's first plan reads an empty WABA; then, before its batch,
    // another instance's sync writes every template. (Without the guard the
    // unique key fails the batch, and the group commit's run alone recovers.)
    const race = racing(w.container, async () => {
      other = await syncWabaTemplates(anotherInstance(w.container), w.wabaId, {
        mode: "live",
      });
    });
    const summary = await syncWabaTemplates(
      { ...w.container, ...race },
      w.wabaId,
      {
        mode: "live",
      },
    );
    assert.equal(
      race.plans,
      libsql ? 2 : 1,
      "planned again after the conflict",
    );
    if (libsql) {
      assert.equal(other!.created, 30);
      assert.equal(summary.created, 0, "the second plan saw them written");
    } else assert.equal(summary.created, 30);
    const rows = await w.templates();
    assert.equal(rows.size, 30);
  },
  { seed: "empty" },
);

metaTest(
  "a template another writer adds between a sync's reads and its batch is disabled too when Meta does not return it",
  async (w) => {
    forbidTransactions(w);
    await w.sim(`/wabas/${w.wabaId}/templates`, {
      generate: { count: 3, prefix: "promo" },
    });
    await syncWabaTemplates(w.container, w.wabaId, { mode: "live" });
    const libsql = w.container.engine === "libsql";
    // This sync's first plan reads the WABA's three rows; then a stale
    // writer (a refresh that read Meta before it deleted the template)
    // adds "late_0001". Meta does not return it: the sync disables it too.
    const race = racing(w.container, async () => {
      await w.container.db.insertInto("templates").values({
        ...(await w.container.db.selectFrom("templates").selectAll()
          .where("name", "=", "promo_0001")
          .executeTakeFirstOrThrow()),
        id: "late-row",
        name: "late_0001",
      }).execute();
    });
    const summary = await syncWabaTemplates(
      { ...w.container, ...race },
      w.wabaId,
      {
        mode: "live",
      },
    );
    assert.equal(race.plans, libsql ? 2 : 1);
    if (libsql) {
      assert.equal(summary.disabled, 1);
      const row = (await w.templates()).get("late_0001/en_US")!;
      assert.equal(row.status, "disabled");
      assert.equal(row.meta_status, "DELETED");
    }
  },
  { seed: "empty" },
);

metaTest(
  "a hand-made template another WABA's sync takes over between a sync's reads and its batch stays that WABA's",
  async (w) => {
    forbidTransactions(w);
    const libsql = w.container.engine === "libsql";
    const db = w.container.db;
    // A global hand-made template: a sync of any WABA of the account takes
    // it over. The demo WABA has order_update/es_AR at Meta.
    const local = await createTemplate(w.container, {
      accountId: w.tenant.account.id,
      name: "order_update",
      language: "es_AR",
      category: "MARKETING",
      status: "approved",
      components: [{ type: "BODY", text: "Hola {{1}}" }],
    });
    await ensureWaba(db, {
      id: "waba-2",
      accountId: w.tenant.account.id,
      now: toDbTime(w.clock.now()),
    });
    const race = racing(w.container, async () => {
      // The other WABA's sync takes it over first.
      await w.container.db.updateTable("templates")
        .set({ waba_id: "waba-2", source: "meta" })
        .where("id", "=", local.id).execute();
    });
    await syncWabaTemplates({ ...w.container, ...race }, w.wabaId, {
      mode: "live",
    });
    assert.equal(race.plans, libsql ? 2 : 1);
    const rows = await db.selectFrom("templates")
      .select(["id", "waba_id"])
      .where("name", "=", "order_update").where("language", "=", "es_AR")
      .orderBy("waba_id").execute();
    if (libsql) {
      assert.equal(rows.length, 2);
      const theirs = rows.find((r) => r.id === local.id)!;
      assert.equal(theirs.waba_id, "waba-2", "not taken from the other WABA");
      assert.ok(rows.some((r) => r.waba_id === w.wabaId && r.id !== local.id));
    } else {
      assert.deepEqual(rows.map((r) => ({ ...r })), [
        { id: local.id, waba_id: w.wabaId },
      ]);
    }
  },
);

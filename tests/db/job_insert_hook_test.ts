// Precompiled job inserts and the JobInsertHook: the pools wake for the
// fan-out's webhook jobs although no plugin sees its statement being built.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { JobInsertHook } from "../../src/db/job_insert_hook.ts";
import { enqueueManyCompiled, PRIORITY } from "../../src/jobs/queue.ts";
import { fanOut } from "../../src/domain/webhooks/fanout_service.ts";
import { newId } from "../../src/ids.ts";

/** The harness's database with a hook that records each call's lanes. */
function hooked(h: Harness) {
  const calls: Array<Set<number> | undefined> = [];
  const hook = new JobInsertHook((lanes) => calls.push(lanes));
  return { db: h.container.db.withPlugin(hook), calls };
}

engineTest(
  "a precompiled job insert fires the JobInsertHook with its lanes only when it asks to wake",
  async (h) => {
    const { db, calls } = hooked(h);
    const job = (i: number, priority: number) => ({
      kind: "jobs.prune" as const,
      payload: {},
      uniqueKey: `hook-test:${i}`,
      priority,
    });
    await enqueueManyCompiled(db, [job(1, PRIORITY.batch)], h.clock.now());
    assert.equal(calls.length, 0, "the send paths wake the pools themselves");
    await db.transaction().execute(async (trx) => {
      await enqueueManyCompiled(
        trx,
        [job(2, PRIORITY.webhook), job(3, PRIORITY.inbound)],
        h.clock.now(),
        { wake: true },
      );
      assert.equal(calls.length, 1, "on the statement, before the commit");
    });
    assert.deepEqual(calls[0], new Set([PRIORITY.webhook, PRIORITY.inbound]));
    const stored = await db.selectFrom("jobs").select("unique_key")
      .where("unique_key", "like", "hook-test:%").orderBy("unique_key")
      .execute();
    assert.deepEqual(stored.map((r) => r.unique_key), [
      "hook-test:1",
      "hook-test:2",
      "hook-test:3",
    ]);
  },
  { allowTransactions: true },
);

engineTest(
  "the fan-out of an event writes one webhook job per subscription and wakes the webhook lane",
  async (h) => {
    const { db, calls } = hooked(h);
    const now = h.clock.now();
    const at = now.toISOString();
    for (let i = 0; i < 2; i++) {
      const res = await h.request("POST", "/api/v2/webhooks", {
        body: {
          url: `https://example.com/hook/${i}`,
          events: ["message.status_changed"],
        },
      });
      assert.equal(res.status, 201, JSON.stringify(res.body));
    }
    const queued = await db.transaction().execute((trx) =>
      fanOut(trx, {
        eventId: newId(),
        accountId: h.tenant.account.id,
        type: "message.status_changed",
        dataText: '{"id":"m1","status":"sent"}',
        subjectId: null,
        createdAt: at,
        lane: "live",
      }, now)
    );
    assert.equal(queued, 2);
    assert.deepEqual(calls, [new Set([PRIORITY.webhook])]);
    const jobs = await db.selectFrom("jobs").select(["kind", "group_key"])
      .where("kind", "=", "webhook.deliver").execute();
    const deliveries = await db.selectFrom("webhook_deliveries")
      .select(["id", "webhook_id", "status"]).execute();
    assert.equal(jobs.length, 2);
    assert.deepEqual(
      jobs.map((j) => j.group_key).sort(),
      deliveries.map((d) => `${h.tenant.account.id}/${d.webhook_id}`).sort(),
      "grouped by subscription, owned by its account",
    );
    assert.ok(deliveries.every((d) => d.status === "pending"));
  },
  { allowTransactions: true },
);

import assert from "node:assert/strict";
import type { WebhookDeliveriesTable } from "../../src/db/schema.ts";
import {
  type AttemptResult,
  findAttemptRows,
  findDelivery,
  finishAttempt,
  finishAttempts,
  insertDeliveries,
  runDependentsNow,
} from "../../src/domain/webhooks/delivery_repo.ts";
import { deliveryJob } from "../../src/domain/webhooks/fanout_service.ts";
import { enqueueMany } from "../../src/jobs/queue.ts";
import { toDbTime } from "../../src/db/time.ts";
import { ENGINES } from "../_harness.ts";
import { webhookTest } from "../_support/webhooks.ts";

for (const engine of ENGINES) {
  webhookTest(
    `[${engine}] the written-out insert and attempt update keep every column`,
    async (h, receiver) => {
      const hook = await h.subscribe({
        url: receiver.url,
        events: ["contact.created"],
      });
      const db = h.container.db;
      // Every column set, none to its default, so a column left out of the
      // statements would read back differently.
      const row = (id: string): WebhookDeliveriesTable => ({
        id,
        account_id: h.tenant.account.id,
        webhook_id: hook.id,
        root_id: `${id}-root`,
        event_id: `${id}-event`,
        event: "contact.created",
        subject_id: `${id}-subject`,
        after_root_id: `${id}-after`,
        kind: "replay",
        attempt: 3,
        status: "pending",
        payload_hash: `${id}-hash`,
        status_code: 502,
        outcome: "5xx",
        error_message: "earlier",
        duration_ms: 17,
        response_excerpt: "bad gateway",
        redirect_location: "https://example.com/x",
        redirect_status_code: 301,
        first_attempt_at: "2026-01-01T00:00:00.000Z",
        attempted_at: "2026-01-01T00:00:01.000Z",
        next_attempt_at: "2026-01-01T00:00:02.000Z",
        created_at: "2026-01-01T00:00:03.000Z",
      });
      const rows = [row("d-1"), row("d-2")];
      await insertDeliveries(db, rows);
      // A plain object: node:sqlite rows have a null prototype.
      const read = async (id: string) => ({
        ...await findDelivery(db, {
          accountId: h.tenant.account.id,
          webhookId: hook.id,
          id,
        }),
      });
      assert.deepEqual(await read("d-1"), rows[0]);
      assert.deepEqual(await read("d-2"), rows[1]);

      const result: AttemptResult = {
        status: "success",
        status_code: 200,
        outcome: "2xx",
        error_message: null,
        duration_ms: 5,
        response_excerpt: "ok",
        redirect_location: null,
        redirect_status_code: null,
        first_attempt_at: "2026-01-01T00:00:04.000Z",
        attempted_at: "2026-01-01T00:00:05.000Z",
        next_attempt_at: null,
      };
      assert.equal(await finishAttempt(db, "d-1", result), true);
      assert.deepEqual(await read("d-1"), {
        ...rows[0],
        ...result,
      });
      // Only a pending row is written, once.
      assert.equal(await finishAttempt(db, "d-1", result), false);
      assert.deepEqual(await read("d-2"), rows[1]);

      // Many at once: every column of each row, pending rows only.
      await insertDeliveries(db, [row("d-3")]);
      const failed: AttemptResult = {
        ...result,
        status: "failed",
        status_code: 503,
        outcome: "5xx",
        error_message: "unavailable",
        duration_ms: 12,
        response_excerpt: null,
        redirect_location: "https://example.com/y",
        redirect_status_code: 302,
        next_attempt_at: "2026-01-01T00:00:09.000Z",
      };
      const written = await finishAttempts(db, [
        { id: "d-1", result: failed },
        { id: "d-2", result },
        { id: "d-3", result: failed },
      ]);
      assert.deepEqual([...written].sort(), ["d-2", "d-3"]);
      assert.deepEqual(await read("d-1"), { ...rows[0], ...result });
      assert.deepEqual(await read("d-2"), { ...rows[1], ...result });
      assert.deepEqual(await read("d-3"), { ...row("d-3"), ...failed });
      assert.deepEqual(await finishAttempts(db, []), new Set());
      // More rows than one statement takes: every one written.
      const many = Array.from({ length: 150 }, (_, i) => row(`m-${i}`));
      await insertDeliveries(db, many);
      const all = await finishAttempts(
        db,
        many.map((r) => ({ id: r.id, result: failed })),
      );
      assert.equal(all.size, 150);
      assert.deepEqual(await read("m-149"), { ...row("m-149"), ...failed });

      // The pending attempts waiting for several chains (d-2 is no longer
      // pending) made due now in one statement: their jobs' run_at, and
      // no other job's.
      await insertDeliveries(db, [row("d-4"), row("d-5")]);
      const later = new Date("2030-01-01T00:00:00.000Z");
      await enqueueMany(
        db,
        ["d-2", "d-4", "d-5", "d-6"].map((id) =>
          deliveryJob({
            id,
            webhook_id: hook.id,
            account_id: h.tenant.account.id,
          }, {
            runAt: later,
          })
        ),
        new Date(),
      );
      await runDependentsNow(db, [
        "d-2-after",
        "d-4-after",
        "d-5-after",
        "d-9-after",
      ], "2026-01-01T00:00:07.000Z");
      await runDependentsNow(db, [], "2026-01-01T00:00:08.000Z");
      const due = await db.selectFrom("jobs").select(["unique_key", "run_at"])
        .where("kind", "=", "webhook.deliver").orderBy("unique_key").execute();
      assert.deepEqual(due.map((j) => ({ ...j })), [
        { unique_key: "webhook.deliver:d-2", run_at: toDbTime(later) },
        {
          unique_key: "webhook.deliver:d-4",
          run_at: "2026-01-01T00:00:07.000Z",
        },
        {
          unique_key: "webhook.deliver:d-5",
          run_at: "2026-01-01T00:00:07.000Z",
        },
        { unique_key: "webhook.deliver:d-6", run_at: toDbTime(later) },
      ]);
      // Attempt rows by id, each with when the pending attempt of the chain
      // it waits for is due: d-4 waits for the pending d-7 chain, d-1 for a
      // chain that has none, d-8 for none at all.
      await insertDeliveries(db, [
        { ...row("d-7"), root_id: "d-4-after" },
        { ...row("d-8"), after_root_id: null },
      ]);
      const found = await findAttemptRows(db, ["d-1", "d-4", "d-8", "d-9"]);
      assert.deepEqual([...found.keys()].sort(), ["d-1", "d-4", "d-8"]);
      assert.equal(found.get("d-4")!.url, receiver.url);
      assert.equal(found.get("d-4")!.first_due, row("d-7").next_attempt_at);
      assert.equal(found.get("d-1")!.first_due, null);
      assert.equal(found.get("d-8")!.first_due, null);
      assert.equal(found.get("d-4")!.data, null);
    },
    { engine },
  );
}

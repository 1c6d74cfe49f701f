// The hot webhook queries read their indexes (partial ones only match when
// the query states their condition verbatim).
import assert from "node:assert/strict";
import type { Db } from "../../src/db/schema.ts";
import { planProbe } from "../_support/plans.ts";
import { createHarness } from "../_harness.ts";
import {
  findAttemptRow,
  listDeliveryRows,
  pendingContactCreated,
  pruneDeliveries,
  runDependentsNow,
} from "../../src/domain/webhooks/delivery_repo.ts";
import { pruneEvents } from "../../src/domain/events/event_repo.ts";
import { subscribersOf } from "../../src/domain/webhooks/webhook_repo.ts";
import { parkGroup } from "../../src/jobs/queue_groups.ts";

Deno.test("webhook queries use their indexes", async () => {
  await using h = await createHarness();
  await using probe = planProbe(`${h.dir}/app.db`);
  const id = crypto.randomUUID();
  const cases: Array<[string, (db: Db) => Promise<unknown>, RegExp]> = [
    [
      "findAttemptRow: the chain it waits for",
      (db) => findAttemptRow(db, id),
      /SUBQUERY[\s\S]*webhook_deliveries_chain_idx \(root_id=\?\)/,
    ],
    [
      "runDependentsNow: the waiting rows",
      (db) => runDependentsNow(db, [id, crypto.randomUUID()], "now"),
      /webhook_deliveries_after_idx/,
    ],
    [
      "runDependentsNow: their jobs",
      (db) => runDependentsNow(db, [id, crypto.randomUUID()], "now"),
      /jobs_unique_key_idx \(unique_key=\?\)/,
    ],
    [
      "pendingContactCreated",
      (db) =>
        pendingContactCreated(db, {
          webhookIds: [id],
          subjectIds: [id],
          lane: 10,
        }),
      /webhook_deliveries_subject_idx/,
    ],
    [
      "findAttemptRow",
      (db) => findAttemptRow(db, id),
      /sqlite_autoindex_webhook_deliveries_1/,
    ],
    [
      "listDeliveryRows",
      (db) => listDeliveryRows(db, { accountId: id, webhookId: id, limit: 50 }),
      /webhook_deliveries_list_idx/,
    ],
    [
      "listDeliveryRows by status",
      (db) =>
        listDeliveryRows(db, {
          accountId: id,
          webhookId: id,
          status: "failed",
          limit: 50,
        }),
      /webhook_deliveries_status_idx/,
    ],
    ["subscribersOf", (db) => subscribersOf(db, id), /webhooks_account_idx/],
    [
      "pruneDeliveries",
      (db) => pruneDeliveries(db, new Date().toISOString()),
      /sqlite_autoindex_webhook_deliveries_1 \(id<\?\)/,
    ],
    [
      "pruneEvents",
      (db) => pruneEvents(db, new Date().toISOString()),
      /LIST SUBQUERY[\s\S]*webhook_deliveries_chain_idx/,
    ],
    [
      "parkGroup",
      (db) =>
        parkGroup(db, {
          groupKey: id,
          keep: 16,
          until: new Date(),
          now: new Date(),
        }),
      /jobs_group_idx/,
    ],
  ];
  for (const [name, run, index] of cases) {
    const plan = await probe.planOf(run);
    assert.match(plan, index, `${name}:\n${plan}`);
    assert.doesNotMatch(
      plan,
      // Walking the partial index of pending rows (pruneEvents) is no full scan.
      /SCAN webhook_deliveries(?! USING INDEX webhook_deliveries_chain_idx)|SCAN jobs\b/,
      `${name}:\n${plan}`,
    );
  }
});

// The hot webhook queries read their indexes (partial ones only match when
// the query states their condition verbatim).
import assert from "node:assert/strict";
import { Kysely, SqliteDialect } from "kysely";
import type { Database } from "../../src/db/schema.ts";
import {
  adaptNodeSqlite,
  openSqliteFile,
} from "../../src/db/sqlite_dialect.ts";
import { createHarness } from "../_harness.ts";
import {
  dependentsOf,
  findAttemptRow,
  listDeliveryRows,
  pendingContactCreated,
  pendingOfChain,
} from "../../src/domain/webhooks/delivery_repo.ts";
import { subscribersOf } from "../../src/domain/webhooks/webhook_repo.ts";
import { parkGroup } from "../../src/jobs/groups.ts";

Deno.test("webhook queries use their indexes", async () => {
  await using h = await createHarness();
  const raw = openSqliteFile(`${h.dir}/app.db`);
  const statements: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: adaptNodeSqlite(raw) }),
    log: (event) => void statements.push(event.query),
  });
  const planOf = async (run: () => Promise<unknown>) => {
    statements.length = 0;
    await run();
    const [issued] = statements;
    return raw.prepare(`explain query plan ${issued!.sql}`)
      .all(...(issued!.parameters as (string | number)[]))
      .map((r) => String(r.detail)).join("\n");
  };
  const id = crypto.randomUUID();
  const cases: Array<[string, () => Promise<unknown>, RegExp]> = [
    [
      "pendingOfChain",
      () => pendingOfChain(db, id),
      /webhook_deliveries_chain_idx/,
    ],
    [
      "dependentsOf",
      () => dependentsOf(db, id),
      /webhook_deliveries_after_idx/,
    ],
    [
      "pendingContactCreated",
      () => pendingContactCreated(db, { webhookIds: [id], subjectId: id }),
      /webhook_deliveries_subject_idx/,
    ],
    [
      "findAttemptRow",
      () => findAttemptRow(db, id),
      /sqlite_autoindex_webhook_deliveries_1/,
    ],
    [
      "listDeliveryRows",
      () => listDeliveryRows(db, { accountId: id, webhookId: id, limit: 50 }),
      /webhook_deliveries_list_idx/,
    ],
    [
      "listDeliveryRows by status",
      () =>
        listDeliveryRows(db, {
          accountId: id,
          webhookId: id,
          status: "failed",
          limit: 50,
        }),
      /webhook_deliveries_status_idx/,
    ],
    ["subscribersOf", () => subscribersOf(db, id), /webhooks_account_idx/],
    [
      "parkGroup",
      () =>
        parkGroup(db, {
          groupKey: id,
          keep: 16,
          until: new Date(),
          now: new Date(),
        }),
      /jobs_group_idx/,
    ],
  ];
  try {
    for (const [name, run, index] of cases) {
      const plan = await planOf(run);
      assert.match(plan, index, `${name}:\n${plan}`);
      assert.doesNotMatch(
        plan,
        /SCAN webhook_deliveries|SCAN jobs\b/,
        `${name}:\n${plan}`,
      );
    }
  } finally {
    await db.destroy();
  }
});

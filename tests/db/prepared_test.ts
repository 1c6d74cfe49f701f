import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { insertRow } from "../../src/db/prepared.ts";
import { keyRow } from "../_support/group_commit.ts";

const row = (key: string, body: string) => ({
  ...keyRow("", key),
  response_body: body,
});

engineTest(
  "insertRow writes one row, reuses its SQL text per column list, and runs its conflict clause",
  async (h) => {
    const db = h.container.db;
    const r = { ...row("a", "{}"), account_id: h.tenant.account.id };
    const first = insertRow("idempotency_keys", r);
    assert.equal(
      first.sql,
      'insert into "idempotency_keys" ("account_id", "key", "route", "request_hash", "response_status", "response_body", "created_at", "expires_at") values (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    assert.equal((await db.executeQuery(first)).numAffectedRows, 1n);
    const again = insertRow("idempotency_keys", { ...r, response_body: "[]" });
    assert.equal(again.sql, first.sql);
    await assert.rejects(db.executeQuery(again), /UNIQUE/i);
    const skipped = insertRow(
      "idempotency_keys",
      { ...r, response_body: "[]" },
      "on conflict do nothing",
    );
    assert.match(skipped.sql, /\) on conflict do nothing$/);
    assert.equal((await db.executeQuery(skipped)).numAffectedRows, 0n);
    const stored = await db.selectFrom("idempotency_keys").selectAll()
      .execute();
    assert.deepEqual(stored.map((s) => ({ ...s })), [r]);
  },
);

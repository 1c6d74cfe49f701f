// Attempt records that end together share one unit of the group commit.
import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { GroupCommit } from "../../src/db/group_commit.ts";
import type { Executor } from "../../src/db/schema.ts";
import type { PlannedWrites } from "../../src/db/planned_writes.ts";
import { RecordBatcher } from "../../src/domain/webhooks/record_batcher.ts";
import { keyRow, turns } from "../_support/group_commit.ts";

engineTest(
  "items added in separate turns are written by one call in one unit; one bad item fails alone",
  async (h) => {
    const windows: Array<() => void> = [];
    const commits = new GroupCommit(h.container.db, {
      defer: (close) => windows.push(close),
    });
    const accountId = h.tenant.account.id;
    const calls: string[][] = [];
    // A plan writer: "bad" writes a key that is already stored ("a"), so
    // its statement fails when the unit's writes run.
    const write = {
      plan: async (_db: Executor, writes: PlannedWrites, keys: string[]) => {
        calls.push([...keys]);
        for (const k of keys) {
          await writes.db.insertInto("idempotency_keys")
            .values(keyRow(accountId, k === "bad" ? "a" : k)).execute();
        }
        return () => keys.map((k) => `${k}!`);
      },
    };
    const batcher = new RecordBatcher(commits, write, { gatherMs: 2 });

    const first = [];
    for (const k of ["a", "b", "c"]) {
      first.push(batcher.add(k));
      await turns();
    }
    assert.equal(windows.length, 1);
    assert.deepEqual(calls, []);
    windows.shift()!();
    assert.deepEqual(await Promise.all(first), ["a!", "b!", "c!"]);
    assert.deepEqual(calls, [["a", "b", "c"]]);
    assert.deepEqual(commits.stats, { groups: 1, units: 1, largest: 1 });

    // A unit with a bad item is rolled back whole, then each item alone.
    calls.length = 0;
    const second = ["d", "bad", "e"].map((k) =>
      batcher.add(k).then((v) => ({ v }), (err) => ({ err: String(err) }))
    );
    // The items alone gather again (or join a writer still running).
    const all = Promise.all(second);
    let settled = false;
    all.then(() => settled = true);
    while (!settled) {
      windows.shift()?.();
      await turns();
    }
    const [d, bad, e] = await all;
    assert.deepEqual([d, e], [{ v: "d!" }, { v: "e!" }]);
    assert.match(String((bad as { err: string }).err), /UNIQUE/i);
    assert.deepEqual(calls, [["d", "bad", "e"], ["d"], ["bad"], ["e"]]);
    const keys = await h.container.db.selectFrom("idempotency_keys")
      .select("key").where("account_id", "=", accountId).execute();
    assert.deepEqual(keys.map((r) => r.key).sort(), ["a", "b", "c", "d", "e"]);
  },
  { allowTransactions: true },
);

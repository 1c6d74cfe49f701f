import assert from "node:assert/strict";
import {
  isReadOnlySql,
  isRetryableLibsqlError,
  MAX_TRIES,
  retryDelayMs,
  withRetries,
  WriteSlots,
} from "../../src/db/write_slots.ts";
import { createHarness } from "../_harness.ts";
import { renderMetrics } from "../../src/domain/system/metrics_service.ts";

Deno.test("WriteSlots never has more than its limit in flight and serves waiters oldest first", async () => {
  const slots = new WriteSlots(2);
  const order: number[] = [];
  let inFlight = 0;
  let most = 0;
  await Promise.all(Array.from({ length: 10 }, (_, i) =>
    slots.run(async () => {
      order.push(i);
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise((r) => setTimeout(r, 1));
      inFlight--;
    })));
  assert.equal(most, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  assert.deepEqual(slots.stats(), {
    inFlight: 0,
    waiting: 0,
    peak: 2,
    retries: 0,
  });
});

Deno.test("statements are told apart: reads take no write slot", () => {
  for (
    const read of [
      "select 1",
      "  SELECT * from jobs",
      "explain query plan select 1",
      "with x as (select 1) select * from x",
    ]
  ) {
    assert.equal(isReadOnlySql(read), true, read);
  }
  for (
    const write of [
      "insert into t values (1)",
      "update jobs set a = 1",
      "delete from t",
      "with x as (select 1) insert into t select * from x",
      "create table t (a)",
      "pragma foreign_keys = on",
      "replace into t values (1)",
    ]
  ) {
    assert.equal(isReadOnlySql(write), false, write);
  }
});

Deno.test("busy, timed-out and throttled libSQL errors are tried again with jittered pauses; others are not", async () => {
  const busy = Object.assign(new Error("SQLITE_BUSY: database is locked"), {
    code: "SQLITE_BUSY",
  });
  const timeout = Object.assign(new Error("Transaction timed-out"), {
    code: "TRANSACTION_TIMEOUT",
  });
  const throttled = Object.assign(
    new Error("Server returned HTTP status 429"),
    {
      code: "SERVER_ERROR",
      cause: { status: 429 },
    },
  );
  const syntax = Object.assign(new Error("near x: syntax error"), {
    code: "SQL_INPUT_ERROR",
  });
  for (const err of [busy, timeout, throttled]) {
    assert.equal(isRetryableLibsqlError(err), true, err.message);
  }
  assert.equal(isRetryableLibsqlError(syntax), false);
  let tries = 0;
  const value = await withRetries(() => {
    if (++tries < 3) throw busy;
    return Promise.resolve("done");
  });
  assert.deepEqual([value, tries], ["done", 3]);
  tries = 0;
  await assert.rejects(
    withRetries(() => {
      tries++;
      throw syntax;
    }),
    /syntax error/,
  );
  assert.equal(tries, 1);
  tries = 0;
  await assert.rejects(
    withRetries(() => {
      tries++;
      throw busy;
    }),
    /database is locked/,
  );
  assert.equal(tries, MAX_TRIES);
  assert.ok(retryDelayMs(0, () => 0) === 5 && retryDelayMs(0, () => 1) === 10);
  assert.equal(retryDelayMs(20, () => 1), 640);
});

Deno.test({
  name:
    "on libSQL, 60 writes at once from one process keep at most 2 in flight at sqld, and all succeed",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createHarness({ engine: "libsql" });
    const results = await Promise.all(
      Array.from(
        { length: 60 },
        (_, i) =>
          h.request("POST", "/api/v2/contacts", {
            body: {
              phoneNumber: `+54911555${String(10000 + i)}`,
              name: `C${i}`,
            },
          }),
      ),
    );
    assert.deepEqual(
      [...new Set(results.map((r) => r.status))],
      [201],
      JSON.stringify(results.find((r) => r.status !== 201)?.body),
    );
    const stats = h.container.dbWrites!.stats();
    assert.equal(stats.peak, 2, JSON.stringify(stats));
    const text = await renderMetrics(h.container);
    assert.match(text, /db_writes\{state="peak"\} 2/);
  },
});

// A transaction that finds another connection holding the write lock waits
// for it on a timer, with the event loop running, instead of inside SQLite's
// busy handler (which blocks the whole process); every other statement keeps
// the connection's busy_timeout. Real SQLite files, a second real connection.
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import { BUSY_TIMEOUT_MS } from "../../src/db/sqlite_dialect.ts";

async function withFileDb(
  fn: (
    opened: ReturnType<typeof openDatabase>,
    other: DatabaseSync,
  ) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "begin-wait-" });
  const path = `${dir}/app.db`;
  const opened = openDatabase(`file:${path}`, {
    checkpointAfterCommits: Infinity,
    checkpointAfterWalPages: Infinity,
  });
  const other = new DatabaseSync(path);
  try {
    await sql`create table t (n integer primary key)`.execute(opened.db);
    await fn(opened, other);
  } finally {
    other.close();
    await opened.db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
}

function busyTimeout(opened: ReturnType<typeof openDatabase>): number {
  const row = opened.connection!.prepare("pragma busy_timeout").all([])[0];
  return Object.values(row as Record<string, number>)[0]!;
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("a transaction waits for another writer's lock with the event loop running, then commits", async () => {
  await withFileDb(async (opened, other) => {
    other.exec("begin immediate");
    other.exec("insert into t values (1)");
    let settled = false;
    const tx = opened.db.transaction().execute(async (trx) => {
      await sql`insert into t values (2)`.execute(trx);
    }).finally(() => settled = true);
    // Timers run while it waits: inside SQLite's busy handler they would
    // not, and after 10 s the BEGIN would fail with "database is locked".
    for (let i = 0; i < 5; i++) await tick(5);
    assert.equal(settled, false, "the transaction did not wait for the lock");
    // Other statements keep the connection's wait while BEGIN retries.
    assert.equal(busyTimeout(opened), BUSY_TIMEOUT_MS);
    other.exec("commit");
    await tx;
    const rows = await sql<{ n: number }>`select n from t order by n`
      .execute(opened.db);
    assert.deepEqual(rows.rows.map((r) => r.n), [1, 2]);
    assert.equal(busyTimeout(opened), BUSY_TIMEOUT_MS);
  });
});

Deno.test("a root write made while BEGIN waits for the lock runs after that transaction, not inside SQLite's busy handler", async () => {
  await withFileDb(async (opened, other) => {
    other.exec("begin immediate");
    const order: string[] = [];
    const tx = opened.db.transaction().execute(async (trx) => {
      await sql`insert into t values (2)`.execute(trx);
      order.push("transaction");
    });
    await tick(5);
    // A root statement (a job claim is one): run now, it would wait for the
    // other connection's lock in the busy handler, the event loop stopped
    // (here, where that connection is on this thread, for the whole 10 s,
    // then fail with "database is locked").
    const root = sql`insert into t values (3)`.execute(opened.db)
      .then(() => order.push("root"));
    await tick(5);
    assert.deepEqual(order, [], "the root write ran before the transaction");
    other.exec("commit");
    await Promise.all([tx, root]);
    assert.deepEqual(order, ["transaction", "root"]);
    const rows = await sql<{ n: number }>`select n from t order by n`
      .execute(opened.db);
    assert.deepEqual(rows.rows.map((r) => r.n), [2, 3]);
  });
});

Deno.test("a BEGIN that fails for another reason than the lock fails at once", async () => {
  await withFileDb(async (opened) => {
    // A transaction already open on the connection: BEGIN cannot nest.
    opened.connection!.prepare("begin").run([]);
    const started = performance.now();
    await assert.rejects(
      opened.db.transaction().execute(async () => {}),
      /within a transaction/,
    );
    // It did not retry until the busy deadline.
    assert.ok(performance.now() - started < BUSY_TIMEOUT_MS / 2);
    opened.connection!.prepare("rollback").run([]);
    assert.equal(busyTimeout(opened), BUSY_TIMEOUT_MS);
  });
});

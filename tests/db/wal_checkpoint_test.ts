import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { sql } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import {
  WAL_AUTOCHECKPOINT_PAGES,
  WAL_SIZE_LIMIT_BYTES,
} from "../../src/db/sqlite_dialect.ts";

const ROW_BYTES = 3000;
const ROWS_PER_TX = 50;

function walBytes(path: string): number {
  try {
    return Deno.statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

async function withFileDb(
  fn: (
    db: ReturnType<typeof openDatabase>["db"],
    path: string,
  ) => Promise<void>,
) {
  const dir = await Deno.makeTempDir({ prefix: "wal-" });
  const path = `${dir}/app.db`;
  // The main connection's own automatic checkpoint, the safety net, alone:
  // a PASSIVE checkpoint of the thread (tests/db/checkpointer_test.ts) can
  // hold the checkpoint lock when it runs, and a writer that never pauses
  // then passes the limit by the transactions until the next one succeeds.
  const { db } = openDatabase(`file:${path}`, {
    checkpointAfterCommits: Infinity,
    checkpointAfterWalPages: Infinity,
  });
  try {
    await sql`create table t (n integer primary key, body blob not null)`
      .execute(db);
    await fn(db, path);
  } finally {
    await db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
}

/** One transaction inserting `rows` rows of ROW_BYTES each (about one page per row). */
async function writeRows(
  db: ReturnType<typeof openDatabase>["db"],
  from: number,
  rows: number,
) {
  await db.transaction().execute(async (trx) => {
    for (let n = from; n < from + rows; n++) {
      await sql`insert into t values (${n}, randomblob(${ROW_BYTES}))`
        .execute(trx);
    }
  });
}

async function count(db: ReturnType<typeof openDatabase>["db"]) {
  const { rows } = await sql<{ n: number }>`select count(*) as n from t`
    .execute(db);
  return rows[0]!.n;
}

Deno.test("a file database opens with wal_autocheckpoint and journal_size_limit set", async () => {
  await withFileDb(async (db) => {
    const { rows } = await sql<
      { wal_autocheckpoint: number }
    >`pragma wal_autocheckpoint`.execute(db);
    assert.equal(rows[0]!.wal_autocheckpoint, WAL_AUTOCHECKPOINT_PAGES);
    const limit = await sql<{ journal_size_limit: number }>`
      pragma journal_size_limit`.execute(db);
    assert.equal(limit.rows[0]!.journal_size_limit, WAL_SIZE_LIMIT_BYTES);
  });
});

Deno.test("under steady writes the WAL is checkpointed and reused: it stays near its limit while twice that is written, and every write reads back", async () => {
  await withFileDb(async (db, path) => {
    const pageBytes = 4096;
    const totalRows = Math.ceil(
      (2 * WAL_SIZE_LIMIT_BYTES) / pageBytes,
    );
    let largest = 0;
    let written = 0;
    while (written < totalRows) {
      await writeRows(db, written, ROWS_PER_TX);
      written += ROWS_PER_TX;
      largest = Math.max(largest, walBytes(path));
    }
    // Without checkpoints the WAL would hold every frame written; with them
    // it is reused from its start, so it holds at most the threshold plus
    // one transaction's frames (a 24-byte header each).
    const oneTx = ROWS_PER_TX * 2 * (pageBytes + 24);
    assert.ok(
      largest <= WAL_SIZE_LIMIT_BYTES + oneTx,
      `WAL reached ${largest} bytes while ${written * ROW_BYTES} were written`,
    );
    assert.equal(await count(db), written, "the server reads its own writes");
    const other = new DatabaseSync(path, { readOnly: true });
    try {
      const row = other.prepare("select count(*) as n from t").get() as {
        n: number;
      };
      assert.equal(row.n, written, "another connection sees every commit");
    } finally {
      other.close();
    }
  });
});

Deno.test("after a transaction larger than the limit, the WAL file is truncated back to the limit", async () => {
  await withFileDb(async (db, path) => {
    const bigRows = Math.ceil((1.25 * WAL_SIZE_LIMIT_BYTES) / 4096);
    await writeRows(db, 0, bigRows);
    const afterBig = walBytes(path);
    assert.ok(
      afterBig > WAL_SIZE_LIMIT_BYTES,
      `the big transaction's WAL: ${afterBig} bytes`,
    );
    // Its commit crossed the threshold and checkpointed the whole log; the
    // next write restarts the log from its start and truncates the file.
    await writeRows(db, bigRows, 1);
    const after = walBytes(path);
    assert.ok(
      after <= WAL_SIZE_LIMIT_BYTES,
      `WAL after the next write: ${after} bytes`,
    );
    assert.equal(await count(db), bigRows + 1);
  });
});

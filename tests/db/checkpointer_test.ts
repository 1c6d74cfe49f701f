import assert from "node:assert/strict";
import { sql } from "kysely";
import {
  BACKGROUND_CHECKPOINT_AFTER_WAL_PAGES,
  openDatabase,
} from "../../src/db/database.ts";
import {
  Checkpointer,
  type CheckpointResult,
} from "../../src/db/checkpointer.ts";
import { WAL_AUTOCHECKPOINT_PAGES } from "../../src/db/sqlite_dialect.ts";
import { waitFor } from "../_support/wait.ts";

type Opened = ReturnType<typeof openDatabase>;

async function withFileDb(
  afterCommits: number,
  fn: (opened: Opened, path: string) => Promise<void>,
  afterWalPages = BACKGROUND_CHECKPOINT_AFTER_WAL_PAGES,
) {
  const dir = await Deno.makeTempDir({ prefix: "ckpt-" });
  const path = `${dir}/app.db`;
  const opened = openDatabase(`file:${path}`, {
    checkpointAfterCommits: afterCommits,
    checkpointAfterWalPages: afterWalPages,
  });
  try {
    await sql`create table t (n integer primary key, body blob not null)`
      .execute(opened.db);
    await fn(opened, path);
  } finally {
    await opened.db.destroy();
    await Deno.remove(dir, { recursive: true });
  }
}

/** `count` transactions of one row of about a page each. */
async function commit(opened: Opened, from: number, count: number) {
  for (let n = from; n < from + count; n++) {
    await opened.db.transaction().execute((trx) =>
      sql`insert into t values (${n}, randomblob(3000))`.execute(trx)
    );
  }
}

Deno.test("a file database starts no checkpointer thread before its threshold of commits", async () => {
  await withFileDb(5, async (opened) => {
    await commit(opened, 0, 4);
    assert.equal(opened.checkpointer?.(), undefined);
    await commit(opened, 4, 1);
    assert.ok(opened.checkpointer?.(), "the fifth commit starts it");
  });
});

Deno.test("a file database starts its checkpointer thread once the WAL has 1,000 pages, before its threshold of commits", async () => {
  await withFileDb(Infinity, async (opened) => {
    await commit(opened, 0, 10);
    assert.equal(opened.checkpointer?.(), undefined);
    await opened.db.transaction().execute((trx) =>
      sql`with recursive s(i) as (select 11 union all select i + 1 from s
          where i < ${10 + BACKGROUND_CHECKPOINT_AFTER_WAL_PAGES})
          insert into t select i, randomblob(3000) from s`
        .execute(trx)
    );
    assert.ok(opened.checkpointer?.(), "the commit past 1,000 pages starts it");
  });
});

Deno.test("an in-memory database has no checkpointer", async () => {
  const opened = openDatabase(":memory:", { checkpointAfterCommits: 1 });
  try {
    await sql`create table t (n integer)`.execute(opened.db);
    await opened.db.transaction().execute((trx) =>
      sql`insert into t values (1)`.execute(trx)
    );
    assert.equal(opened.checkpointer?.(), undefined);
  } finally {
    await opened.db.destroy();
  }
});

Deno.test("the checkpointer thread copies the WAL back and the next write restarts the WAL, with no checkpoint in a commit", async () => {
  await withFileDb(1, async (opened, path) => {
    const before = Deno.statSync(path).size;
    await commit(opened, 0, 300);
    const ckpt = opened.checkpointer!();
    assert.ok(ckpt);
    // Far below the main connection's automatic checkpoint: no COMMIT
    // checkpoints here, so what reaches the database file is the thread's.
    assert.ok(300 * 2 < WAL_AUTOCHECKPOINT_PAGES);
    // A pass posted during the commits may have found every frame of that
    // moment copied back (and the WAL may have restarted since): wait for a
    // pass that began after the last commit.
    const runs = ckpt.stats.runs;
    await waitFor(
      () =>
        ckpt.stats.runs >= runs + 2 &&
        ckpt.stats.checkpointed === ckpt.stats.log,
      { what: "a checkpoint of every frame" },
    );
    assert.ok(
      Deno.statSync(path).size >= before + 300 * 3000,
      "the rows were copied into the database file",
    );
    // Everything copied back: a write transaction writes the WAL from its
    // start, and the thread's next pass finds it shorter. SQLite appends
    // instead when a pass runs at that moment, so write a row at a time
    // until a pass finds the WAL restarted.
    const restarts = ckpt.stats.restarts;
    let n = 300;
    await waitFor(async () => {
      if (ckpt.stats.restarts > restarts) return true;
      await commit(opened, n++, 1);
      return false;
    }, { what: "a checkpoint after the WAL restarted", intervalMs: 50 });
    const { rows } = await sql<{ n: number }>`select count(*) as n from t`
      .execute(opened.db);
    assert.equal(rows[0]!.n, n);
    assert.equal(
      ckpt.stats.forced,
      0,
      "below RESTART_AFTER_FRAMES: no RESTART",
    );
  });
});

Deno.test("under writes that never pause, the thread's RESTART checkpoint restarts the WAL once it has restartFrames", async () => {
  await withFileDb(Infinity, async (opened, path) => {
    // A PASSIVE checkpoint alone trails such a writer; from 100 frames on
    // the thread copies the rest under the write lock.
    const ckpt = new Checkpointer(path, { everyMs: 5, restartFrames: 100 });
    try {
      let n = 0;
      while (ckpt.stats.forced === 0 || ckpt.stats.restarts === 0) {
        assert.ok(n < 50_000, "no RESTART checkpoint in 50,000 commits");
        await commit(opened, n, 20);
        n += 20;
        await new Promise((r) => setTimeout(r, 0)); // the thread's results
      }
      assert.ok(ckpt.stats.largest < WAL_AUTOCHECKPOINT_PAGES);
      const { rows } = await sql<{ n: number }>`select count(*) as n from t`
        .execute(opened.db);
      assert.equal(rows[0]!.n, n);
    } finally {
      await ckpt.stop();
    }
  }, Infinity); // this test's thread only
});

Deno.test("the thread's pause doubles while little is written and halves once a pass finds minFrames committed", async () => {
  await withFileDb(Infinity, async (opened, path) => {
    const passes: CheckpointResult[] = [];
    const ckpt = new Checkpointer(path, {
      everyMs: 5,
      maxMs: 40,
      minFrames: 50,
      restartFrames: 100_000,
      onPass: (result) => passes.push(result),
    });
    try {
      // Nothing written: 5, 10, 20, 40 ms, and no further.
      await waitFor(() => ckpt.stats.pauseMs === 40, {
        what: "the pause grown to maxMs",
      });
      assert.deepEqual(
        passes.slice(0, 3).map((p) => p.pauseMs),
        [10, 20, 40],
      );
      const idleRuns = ckpt.stats.runs;
      await waitFor(() => ckpt.stats.runs >= idleRuns + 2, {
        what: "two more passes",
      });
      assert.equal(ckpt.stats.pauseMs, 40, "it stays at maxMs");
      // One commit of about 80 pages: the next pass copies them and comes back sooner.
      await opened.db.transaction().execute((trx) =>
        sql`with recursive s(i) as (select 0 union all select i + 1 from s
            where i < 79) insert into t select i, randomblob(3000) from s`
          .execute(trx)
      );
      const before = passes.length;
      await waitFor(() => passes.slice(before).some((p) => p.log >= 80), {
        what: "a pass that found the burst",
      });
      const burst = passes.slice(before).find((p) => p.log >= 80)!;
      assert.equal(burst.checkpointed, burst.log, "it copied every frame");
      assert.equal(burst.pauseMs, 20);
      // Then quiet again: the pause grows back.
      await waitFor(() => ckpt.stats.pauseMs === 40, {
        what: "the pause grown again",
      });
    } finally {
      await ckpt.stop();
    }
  }, Infinity); // this test's thread only
});

Deno.test("a checkpointer whose thread cannot open the file ends the thread, not the process", async () => {
  const ckpt = new Checkpointer("/nonexistent-dir-for-checkpointer/app.db");
  await waitFor(() => ckpt.failed, { what: "the thread's failure" });
  assert.equal(ckpt.stats.runs, 0);
  await ckpt.stop();
});

import assert from "node:assert/strict";
import { sql } from "kysely";
import { enqueue, PRIORITY } from "../../src/jobs/queue.ts";
import { WriteConflict } from "../../src/db/atomic.ts";
import { engineTest } from "../_harness.ts";

engineTest(
  "a plan's writes are recorded, then committed together; the job-insert signal fires at the commit, not before",
  async (h) => {
    if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
    await sql`create table t (id integer primary key, n integer not null)`
      .execute(h.container.db);
    const lanes: number[] = [];
    const stop = h.container.jobs.subscribe((l) => lanes.push(...(l ?? [])));
    let recorded = -1;
    const got = await h.container.commits.runPlanned(async (db, writes) => {
      const { rows } = await sql<{ n: number }>`select count(*) as n from t`
        .execute(db);
      await sql`insert into t (id, n) values (1, ${Number(rows[0]!.n)})`
        .execute(writes.db);
      await enqueue(writes.db, {
        kind: "meta.inbound",
        payload: { payloadId: "p1" },
      }, h.clock.now());
      const update = writes.add(
        sql`update t set n = n + 41 where id = 1 returning n`.compile(
          writes.db,
        ),
      );
      recorded = lanes.length;
      return (answers) => (answers.of(update).rows[0] as { n: number }).n;
    });
    stop();
    assert.equal(got, 41);
    assert.equal(recorded, 0, "no signal while the plan only recorded");
    assert.deepEqual(lanes, [PRIORITY.inbound]);
    const jobs = await h.container.db.selectFrom("jobs").select("kind")
      .execute();
    assert.deepEqual(jobs.map((j) => j.kind), ["meta.inbound"]);
  },
);

engineTest(
  "a read on a plan's writes fails the plan (its answers would be empty)",
  async (h) => {
    await assert.rejects(
      h.container.commits.runPlanned(async (_db, writes) => {
        await sql`select 1`.execute(writes.db);
        return () => undefined;
      }),
      /Cannot read in a unit's write phase/,
    );
  },
);

engineTest(
  "a guard that finds what the plan read changed plans it again (libSQL); SQLite's transaction leaves guards out",
  async (h) => {
    await sql`create table t (id integer primary key, n integer not null)`
      .execute(h.container.db);
    await sql`insert into t (id, n) values (1, 0)`.execute(h.container.db);
    let plans = 0;
    const result = await h.container.commits.runPlanned(async (db, writes) => {
      plans++;
      const { rows } = await sql<{ n: number }>`select n from t where id = 1`
        .execute(db);
      const n = Number(rows[0]!.n);
      // Another writer moves the row between this plan's read and its batch,
      // once (on SQLite the plan holds the write lock: it cannot).
      if (plans === 1 && h.engine === "libsql") {
        await sql`update t set n = 100 where id = 1`.execute(h.container.db);
      }
      await sql`update t set n = ${n + 1} where id = 1 and n = ${n}`
        .execute(writes.db);
      writes.expectChanges(1);
      assert.equal(writes.guarded, h.engine === "libsql");
      return () => n + 1;
    });
    assert.equal(plans, h.engine === "libsql" ? 2 : 1);
    assert.equal(result, h.engine === "libsql" ? 101 : 1);
  },
);

engineTest(
  "a guard that keeps failing ends in WriteConflict with nothing written",
  async (h) => {
    if (h.engine !== "libsql") return;
    await sql`create table t (id integer primary key)`.execute(h.container.db);
    await assert.rejects(
      h.container.commits.runPlanned(async (_db, writes) => {
        await sql`insert into t (id) values (1)`.execute(writes.db);
        writes.expectRow(sql`select 1 from t where id = 2`.compile(writes.db));
        return () => undefined;
      }),
      WriteConflict,
    );
    const { rows } = await sql`select * from t`.execute(h.container.db);
    assert.deepEqual(rows, []);
  },
);

engineTest(
  "plans that commit together in one batch each get the answers of their own statements",
  async (h) => {
    if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
    await sql`create table t (id integer primary key, n integer not null)`
      .execute(h.container.db);
    // Started in one turn: on libSQL they share one write batch, on SQLite
    // one group transaction. Each returns what its own statements changed.
    const plans = [1, 2, 3].map((id) =>
      h.container.commits.runPlanned(async (_db, writes) => {
        await sql`insert into t (id, n) values (${id}, ${id * 10})`
          .execute(writes.db);
        const update = writes.add(
          sql`update t set n = n + 1 where id = ${id} returning id, n`.compile(
            writes.db,
          ),
        );
        return (answers) => ({ ...answers.of(update).rows[0] as object });
      })
    );
    assert.deepEqual(await Promise.all(plans), [
      { id: 1, n: 11 },
      { id: 2, n: 21 },
      { id: 3, n: 31 },
    ]);
    const batches = h.container.commits.batchStats;
    if (batches) assert.ok(batches.batches < 3, "they shared a batch");
  },
);

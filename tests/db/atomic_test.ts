import assert from "node:assert/strict";
import { sql } from "kysely";
import {
  type AtomicUnit,
  isGuardFailure,
  MAX_CONFLICTS,
  runAtomic,
  WriteBatch,
  WriteConflict,
} from "../../src/db/atomic.ts";
import type { Executor } from "../../src/db/schema.ts";
import { engineTest } from "../_harness.ts";

/** A read-modify-write of one counter: it reads n, then writes n + 1 only if n is still n. */
function increment(): AtomicUnit<number, number> {
  return {
    read: async (db: Executor) => {
      const { rows } = await sql<
        { n: number }
      >`select n from counter where id = 1`
        .execute(db);
      return Number(rows[0]!.n);
    },
    write: (n, batch) => {
      batch.add(sql`update counter set n = ${n + 1} where id = 1 and n = ${n}`);
      batch.expectChanges(1);
      return () => n + 1;
    },
  };
}

engineTest(
  "units that read then write the same row concurrently all land, each on what it read (guards retry the losers)",
  async (h) => {
    await sql`create table counter (id integer primary key, n integer not null)`
      .execute(h.container.db);
    await sql`insert into counter (id, n) values (1, 0)`.execute(
      h.container.db,
    );
    const results = await Promise.all(
      Array.from({ length: 12 }, () => runAtomic(h.container, increment())),
    );
    assert.deepEqual(
      [...results].sort((a, b) => a - b),
      Array.from({ length: 12 }, (_, i) => i + 1),
    );
    const { rows } = await sql<{ n: number }>`select n from counter`.execute(
      h.container.db,
    );
    assert.equal(Number(rows[0]!.n), 12);
    assert.deepEqual(
      (await sql`select * from batch_guard`.execute(h.container.db)).rows,
      [],
    );
  },
);

engineTest(
  "a batch is all or nothing: a failing statement keeps the others out",
  async (h) => {
    await sql`create table t (id integer primary key)`.execute(h.container.db);
    await assert.rejects(
      runAtomic(h.container, {
        read: () => Promise.resolve(undefined),
        write: (_plan, batch) => {
          batch.add(sql`insert into t (id) values (1)`);
          batch.add(sql`insert into t (id) values (1)`); // unique: fails
          return () => undefined;
        },
      }),
      (err: unknown) => !isGuardFailure(err),
    );
    const { rows } = await sql`select * from t`.execute(h.container.db);
    assert.deepEqual(rows, []);
  },
);

engineTest(
  "a guard that keeps failing ends in WriteConflict, and nothing of the batch is written",
  async (h) => {
    await sql`create table t (id integer primary key)`.execute(h.container.db);
    let reads = 0;
    await assert.rejects(
      runAtomic(h.container, {
        read: () => Promise.resolve(++reads),
        write: (_n, batch) => {
          batch.add(sql`insert into t (id) values (1)`);
          batch.expectRow(sql`select 1 from t where id = 2`);
          return () => undefined;
        },
      }),
      WriteConflict,
    );
    assert.equal(reads, h.engine === "libsql" ? MAX_CONFLICTS : 1);
    const { rows } = await sql`select * from t`.execute(h.container.db);
    assert.deepEqual(rows, []);
  },
);

engineTest(
  "the group commit writes the atomic units of one moment together (on libSQL in one batch), and a bad unit fails alone",
  async (h) => {
    await sql`create table t (id integer primary key)`.execute(h.container.db);
    const insert = (id: number) => ({
      read: () => Promise.resolve(id),
      write: (n: number, batch: WriteBatch) => {
        batch.add(sql`insert into t (id) values (${n})`);
        return () => n;
      },
    });
    await sql`insert into t (id) values (3)`.execute(h.container.db);
    const results = await Promise.allSettled(
      [1, 2, 3, 4, 5].map((id) => h.container.commits.runAtomic(insert(id))),
    );
    assert.deepEqual(results.map((r) => r.status), [
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    const { rows } = await sql<{ id: number }>`select id from t order by id`
      .execute(h.container.db);
    assert.deepEqual(rows.map((r) => Number(r.id)), [1, 2, 3, 4, 5]);
  },
);

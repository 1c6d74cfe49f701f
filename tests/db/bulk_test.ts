// insertRows binds a value that every row of a statement shares once (a
// numbered parameter each row names) and the others row by row: the rows
// read back as given, in order, on both engines.
import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { recordingQueries } from "../_support/recording.ts";
import { insertRows, insertRowsWhere } from "../../src/db/bulk.ts";
import type { Executor, JobsTable } from "../../src/db/schema.ts";
import { newId } from "../../src/ids.ts";

function job(i: number, over: Partial<JobsTable> = {}): JobsTable {
  return {
    id: newId(),
    kind: "message.send",
    priority: 30,
    payload: JSON.stringify({ n: i }),
    state: "available",
    attempt: 0,
    max_attempts: 12,
    run_at: `2026-11-23T10:00:${String(i % 60).padStart(2, "0")}.000Z`,
    locked_by: null,
    locked_until: null,
    lease_token: null,
    unique_key: `bulk:${i}`,
    errors: "[]",
    created_at: "2026-11-23T10:00:00.000Z",
    updated_at: "2026-11-23T10:00:00.000Z",
    finalized_at: null,
    group_key: i % 3 === 0 ? null : `g${i % 2}`,
    ...over,
  };
}

async function readJobs(db: Executor, ids: string[]) {
  const rows = await db.selectFrom("jobs").selectAll()
    .where("id", "in", ids).execute();
  const byId = new Map(rows.map((r) => [r.id, r]));
  return ids.map((id) => {
    // A held job's columns (migration 0021) are not given by these rows.
    const { hold_key: _key, held_since: _since, ...r } = byId.get(id)!;
    return {
      ...r,
      priority: Number(r.priority),
      attempt: Number(r.attempt),
      max_attempts: Number(r.max_attempts),
    };
  });
}

engineTest(
  "insertRows binds what every row shares once and stores each row as given",
  async (h) => {
    const { db, queries } = recordingQueries(h.container.db);
    // Shared: kind, priority, state, attempt, max_attempts, the three nulls
    // of locking, errors, the times and finalized_at; not shared: id,
    // payload, run_at, unique_key, group_key (null in some rows only).
    const rows = Array.from({ length: 7 }, (_, i) => job(i));
    await insertRows(db, "jobs", rows);
    assert.equal(queries.length, 1);
    const { sql, parameters } = queries[0]!;
    assert.match(sql, /^with shared as \(select \?12\) insert into jobs /);
    assert.equal(parameters.length, 12 + 7 * 5);
    assert.deepEqual(
      await readJobs(h.container.db, rows.map((r) => r.id)),
      rows,
    );
  },
);

engineTest(
  "insertRows of one row, or of rows sharing nothing, binds every value in row order",
  async (h) => {
    const { db, queries } = recordingQueries(h.container.db);
    const one = [job(1)];
    await insertRows(db, "jobs", one);
    const distinct = [
      job(2, { kind: "a", priority: 1, state: "available", errors: "[]" }),
      job(3, { kind: "b", priority: 2, state: "retryable", errors: "[1]" }),
    ].map((r, i) => ({
      ...r,
      attempt: i,
      max_attempts: 5 + i,
      locked_by: i ? "w" : null,
      locked_until: i ? "2026-11-23T10:01:00.000Z" : null,
      lease_token: i ? "t" : null,
      created_at: `2026-11-23T10:00:0${i}.000Z`,
      updated_at: `2026-11-23T10:00:0${i}.000Z`,
      finalized_at: i ? "2026-11-23T10:02:00.000Z" : null,
      group_key: i ? "g" : null,
    }));
    await insertRows(db, "jobs", distinct);
    for (const q of queries) assert.match(q.sql, /^insert into jobs /);
    assert.deepEqual(queries.map((q) => q.parameters.length), [17, 34]);
    const all = [...one, ...distinct];
    assert.deepEqual(await readJobs(h.container.db, all.map((r) => r.id)), all);
  },
);

engineTest(
  "insertRows past SQLite's variable limit splits the rows, each statement sharing what its rows share",
  async (h) => {
    const { db, queries } = recordingQueries(h.container.db);
    // 17 columns: 1,927 rows a statement.
    const rows = Array.from({ length: 2_000 }, (_, i) => job(i));
    await insertRows(db, "jobs", rows);
    assert.deepEqual(
      queries.map((q) => q.parameters.length),
      [12 + 1_927 * 5, 12 + 73 * 5],
    );
    const back = await readJobs(h.container.db, rows.map((r) => r.id));
    assert.deepEqual(back, rows);
  },
);

engineTest(
  "insertRows keeps the order of the rows given (autoincrement sequence)",
  async (h) => {
    const events = Array.from({ length: 50 }, (_, i) => ({
      id: newId(),
      account_id: h.tenant.account.id,
      type: i % 2 ? "contact.created" : "conversation.created",
      data: JSON.stringify({ i }),
      created_at: "2026-11-23T10:00:00.000Z",
    }));
    await insertRows(h.container.db, "events", events);
    const back = await h.container.db.selectFrom("events")
      .select(["id", "type", "data"]).where("id", "in", events.map((e) => e.id))
      .orderBy("seq").execute();
    assert.deepEqual(
      back.map((r) => ({ ...r })),
      events.map(({ id, type, data }) => ({ id, type, data })),
    );
  },
);

engineTest(
  "insertRowsWhere writes each row only where its condition holds for its key when the statement runs",
  async (h) => {
    const db = h.container.db;
    const present = job(100);
    await insertRows(db, "jobs", [present]);
    // Rows keyed by a job id: only the one whose key names a stored job goes in.
    const rows = [job(101), job(102), job(103)];
    const { db: seen, queries } = recordingQueries(db);
    await insertRowsWhere(
      seen,
      "jobs",
      [
        { key: present.id, row: rows[0]! },
        { key: "absent", row: rows[1]! },
        { key: present.id, row: rows[2]! },
      ],
      "exists (select 1 from jobs as j where j.id = v.k)",
    );
    assert.equal(queries.length, 1);
    assert.deepEqual(
      (await db.selectFrom("jobs").select("id").where(
        "id",
        "in",
        rows.map((r) => r.id),
      ).execute()).map((r) => r.id).sort(),
      [rows[0]!.id, rows[2]!.id].sort(),
    );
    assert.deepEqual(await readJobs(db, [rows[0]!.id]), [rows[0]]);
  },
);

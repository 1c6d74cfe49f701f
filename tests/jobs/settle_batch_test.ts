// Settling many jobs is one statement per outcome kind, and each job still proves its lease.
import assert from "node:assert/strict";
import { createHarness, engineTest, type Harness } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import { addMs } from "../../src/db/time.ts";
import { createLogger } from "../../src/log.ts";
import { Kysely, SqliteDialect } from "kysely";
import type { Database, Db } from "../../src/db/schema.ts";
import {
  adaptNodeSqlite,
  openSqliteFile,
} from "../../src/db/sqlite_dialect.ts";
import {
  claim,
  completeMany,
  completeManyQueries,
  enqueueManyUnchecked,
  failMany,
  type JobRow,
  PRIORITY,
  releaseMany,
  rescueExpiredLeases,
} from "../../src/jobs/queue.ts";
import { AppError } from "../../src/errors.ts";
import { Snooze, WorkerPool } from "../../src/jobs/worker_pool.ts";

const LEASE_MS = 30_000;

async function claimed(h: Harness, n: number, maxAttempts = 3) {
  const db = h.container.db;
  await enqueueManyUnchecked(
    db,
    Array.from({ length: n }, (_, i) => ({
      kind: "t.batch",
      payload: { i },
      priority: PRIORITY.live,
      maxAttempts,
    })),
    h.clock.now(),
  );
  const jobs = await claim(db, {
    workerId: "w1",
    limit: n,
    leaseMs: LEASE_MS,
    now: h.clock.now(),
  });
  assert.equal(jobs.length, n);
  return jobs;
}

/** Loses the lease of `job`: it expires and is rescued (its token stops working). */
async function loseLease(h: Harness, job: JobRow) {
  const db = h.container.db;
  await db.updateTable("jobs").set({ locked_until: "2000-01-01T00:00:00.000Z" })
    .where("id", "=", job.id).execute();
  assert.equal(await rescueExpiredLeases(db, h.clock.now()), 1);
}

async function rows(h: Harness, jobs: JobRow[]) {
  const all = await h.container.db.selectFrom("jobs").selectAll()
    .where("id", "in", jobs.map((j) => j.id)).execute();
  return jobs.map((j) => all.find((r) => r.id === j.id)!);
}

engineTest(
  "completeMany() completes every job it holds the lease of and leaves a job whose lease was lost",
  async (h) => {
    const jobs = await claimed(h, 4);
    await loseLease(h, jobs[1]!);
    const done = await completeMany(h.container.db, jobs, h.clock.now());
    assert.deepEqual(
      [...done].sort(),
      [jobs[0]!.id, jobs[2]!.id, jobs[3]!.id].sort(),
    );
    const states = (await rows(h, jobs)).map((r) => r.state);
    assert.deepEqual(states, [
      "completed",
      "retryable",
      "completed",
      "completed",
    ]);
  },
);

engineTest(
  "failMany() gives each job its own outcome: retryable, discarded when permanent or on its last attempt, lost without its lease",
  async (h) => {
    const clock = h.clock as ManualClock;
    const jobs = await claimed(h, 4, 1);
    // Make the first one a job with attempts left.
    await h.container.db.updateTable("jobs").set({ max_attempts: 3 })
      .where("id", "=", jobs[0]!.id).execute();
    await loseLease(h, jobs[3]!);
    const now = clock.now();
    const retryAt = addMs(now, 60_000);
    const out = await failMany(h.container.db, [
      { job: jobs[0]!, error: "timeout", retryable: true, retryAt },
      { job: jobs[1]!, error: "last try", retryable: true },
      { job: jobs[2]!, error: "bad input", retryable: false },
      { job: jobs[3]!, error: "late", retryable: true },
    ], now);
    assert.deepEqual(jobs.map((j) => out.get(j.id)), [
      "retryable",
      "discarded",
      "discarded",
      "lost",
    ]);
    const [a, b, c, d] = await rows(h, jobs);
    assert.equal(a!.run_at, retryAt.toISOString());
    assert.equal(a!.finalized_at, null);
    assert.equal(b!.finalized_at, now.toISOString());
    assert.deepEqual(JSON.parse(a!.errors), [
      { at: now.toISOString(), attempt: 1, error: "timeout" },
    ]);
    assert.deepEqual(JSON.parse(c!.errors), [
      { at: now.toISOString(), attempt: 1, error: "bad input" },
    ]);
    assert.ok(!d!.errors.includes("late"), "a lost job keeps its history");
  },
);

engineTest(
  "releaseMany() gives jobs back without counting the attempt, each at its own time and note",
  async (h) => {
    const jobs = await claimed(h, 3);
    await loseLease(h, jobs[2]!);
    const now = h.clock.now();
    const later = addMs(now, 5_000);
    const released = await releaseMany(h.container.db, [
      { job: jobs[0]!, runAt: later },
      { job: jobs[1]!, runAt: now, note: "Released at shutdown" },
      { job: jobs[2]!, runAt: now },
    ], now);
    assert.deepEqual([...released].sort(), [jobs[0]!.id, jobs[1]!.id].sort());
    const [a, b, c] = await rows(h, jobs);
    assert.deepEqual(
      [a!.state, a!.attempt, a!.run_at, a!.lease_token],
      ["available", 0, later.toISOString(), null],
    );
    assert.equal(JSON.parse(a!.errors).length, 0);
    assert.deepEqual(JSON.parse(b!.errors), [
      { at: now.toISOString(), attempt: 1, error: "Released at shutdown" },
    ]);
    assert.equal(c!.state, "retryable", "the rescued job is left as it was");
  },
);

engineTest(
  "settling finds a job by the rowid its claim returned, checks its id there, and falls back to the id when the rowid no longer holds it",
  async (h) => {
    const db = h.container.db;
    const jobs = await claimed(h, 4);
    assert.ok(jobs.every((j) => typeof j.rowid === "number"));
    const [a, b, c, d] = jobs as [JobRow, JobRow, JobRow, JobRow];
    // A hint that points at another running job (rows renumbered by a VACUUM) settles neither by mistake.
    const done = await completeMany(
      db,
      [{ ...a, rowid: b.rowid }],
      h.clock.now(),
    );
    assert.deepEqual([...done], [a.id]);
    assert.deepEqual((await rows(h, [a, b])).map((r) => r.state), [
      "completed",
      "running",
    ]);
    // A hint that points at no row, and a lease without one.
    const rest = await failMany(db, [
      { job: { ...b, rowid: 1e9 }, error: "moved", retryable: true },
      { job: { ...c, rowid: undefined }, error: "no hint", retryable: true },
    ], h.clock.now());
    assert.deepEqual([rest.get(b.id), rest.get(c.id)], [
      "retryable",
      "retryable",
    ]);
    // A wrong hint for a job whose lease was lost stays lost.
    await loseLease(h, d);
    const lost = await releaseMany(db, [
      { job: { ...d, rowid: a.rowid }, runAt: h.clock.now() },
    ], h.clock.now());
    assert.equal(lost.size, 0);
    assert.deepEqual((await rows(h, jobs)).map((r) => r.state), [
      "completed",
      "retryable",
      "retryable",
      "retryable",
    ]);
  },
);

engineTest(
  "settling more jobs than one statement takes settles each with its own values, and a lost lease or a stale rowid in any chunk is as in one",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    // 210 of each: more than the retry by id of one statement could hide.
    const jobs = await claimed(h, 630);
    const [done, failed, back] = [
      jobs.slice(0, 210),
      jobs.slice(210, 420),
      jobs.slice(420),
    ];
    const lost = [done[50]!, done[205]!, failed[99]!, back[1]!];
    for (const j of lost) await loseLease(h, j);
    const ids = (js: JobRow[]) => js.map((j) => j.id).sort();
    const live = (js: JobRow[]) => js.filter((j) => !lost.includes(j));

    // A stale rowid hint in the second statement is retried by id.
    const completed = await completeMany(
      db,
      done.map((j, i) => i === 101 ? { ...j, rowid: 1e9 } : j),
      now,
    );
    assert.deepEqual([...completed].sort(), ids(live(done)));

    const retryAt = (i: number) => addMs(now, 1_000 * (i + 1));
    const states = await failMany(
      db,
      failed.map((job, i) => ({
        job,
        error: `e-${i}`,
        retryable: i % 2 === 0,
        retryAt: retryAt(i),
      })),
      now,
    );
    assert.deepEqual(
      failed.map((j) => states.get(j.id)),
      failed.map((_, i) =>
        i === 99 ? "lost" : i % 2 === 0 ? "retryable" : "discarded"
      ),
    );

    const runAt = (i: number) => addMs(now, 7_000 * (i + 1));
    const released = await releaseMany(
      db,
      back.map((job, i) => ({
        // A hint that holds another job, in the second statement.
        job: i === 100 ? { ...job, rowid: done[0]!.rowid } : job,
        runAt: runAt(i),
        ...(i % 3 === 0 ? { note: `n-${i}` } : {}),
      })),
      now,
    );
    assert.deepEqual([...released].sort(), ids(live(back)));

    const all = await rows(h, jobs);
    const at = (j: JobRow) => all[jobs.indexOf(j)]!;
    for (const j of lost) assert.equal(at(j).state, "retryable");
    for (const j of live(done)) assert.equal(at(j).state, "completed");
    failed.forEach((j, i) => {
      if (i === 99) return;
      const r = at(j);
      assert.equal(r.run_at, i % 2 === 0 ? retryAt(i).toISOString() : j.runAt);
      assert.deepEqual(JSON.parse(r.errors), [
        { at: now.toISOString(), attempt: 1, error: `e-${i}` },
      ]);
    });
    back.forEach((j, i) => {
      if (i === 1) return;
      const r = at(j);
      assert.deepEqual(
        [r.state, r.attempt, r.run_at, JSON.parse(r.errors).length],
        ["available", 0, runAt(i).toISOString(), i % 3 === 0 ? 1 : 0],
      );
      if (i % 3 === 0) assert.equal(JSON.parse(r.errors)[0].error, `n-${i}`);
    });
  },
);

/**
 * A second connection to the harness's SQLite file that counts the settling
 * statements run through it (Kysely's query log sees transactions too).
 */
function counting(h: Harness) {
  const counts = { complete: 0, fail: 0, release: 0 };
  const path = h.container.config.databaseUrl.slice("file:".length);
  const db: Db = new Kysely<Database>({
    dialect: new SqliteDialect({
      database: adaptNodeSqlite(openSqliteFile(path)),
    }),
    log: (event) => {
      const text = event.query.sql.replace(/\s+/g, " ");
      if (text.startsWith("update jobs set state = 'completed'")) {
        counts.complete++;
      } else if (text.includes("then 'discarded' else 'retryable'")) {
        counts.fail++;
      } else if (text.startsWith("update jobs set state = 'available'")) {
        counts.release++;
      }
    },
  });
  return { db, counts };
}

Deno.test(
  "a pool settles the jobs that finish together with one statement per outcome kind",
  async () => {
    await using h = await createHarness();
    const { db, counts } = counting(h);
    await enqueueManyUnchecked(
      db,
      [
        ...Array.from({ length: 6 }, (_, i) => ({
          kind: "t.ok",
          payload: { i },
          priority: PRIORITY.live,
        })),
        ...["t.bad", "t.bad", "t.later", "t.later"].map((kind) => ({
          kind,
          payload: {},
          priority: PRIORITY.live,
        })),
      ],
      h.clock.now(),
    );
    const pool = new WorkerPool({
      db,
      clock: h.clock,
      log: createLogger("silent"),
      concurrency: 10,
      handlers: {
        "t.ok": () => Promise.resolve(),
        "t.bad": () => Promise.reject(new AppError("VALIDATION_ERROR", "no")),
        "t.later": () => Promise.reject(new Snooze(60_000)),
      },
    });
    assert.equal(await pool.runOnce({ maxJobs: 10 }), 10);
    assert.deepEqual(counts, { complete: 1, fail: 1, release: 1 });
    const states = await h.container.db.selectFrom("jobs")
      .select(["kind", "state"]).execute();
    const byKind = (kind: string) =>
      states.filter((s) => s.kind === kind).map((s) => s.state);
    assert.deepEqual(byKind("t.ok"), Array(6).fill("completed"));
    assert.deepEqual(byKind("t.bad"), ["discarded", "discarded"]);
    assert.deepEqual(byKind("t.later"), ["available", "available"]);
    await db.destroy();
  },
);

engineTest(
  "completeManyQueries completes in one statement a batch can carry: a stale rowid hint is tried by id there, a lost lease is left out",
  async (h) => {
    const db = h.container.db;
    const jobs = await claimed(h, 4);
    const [a, b, c, d] = jobs as [JobRow, JobRow, JobRow, JobRow];
    await loseLease(h, d);
    const queries = completeManyQueries([
      { ...a, rowid: b.rowid }, // points at another running job
      { ...b, rowid: 1e9 }, // points at no row
      { ...c, rowid: undefined },
      d,
    ], h.clock.now());
    assert.equal(queries.length, 1);
    const { rows: done } = await db.executeQuery<{ id: string }>(queries[0]!);
    assert.deepEqual(done.map((r) => r.id).sort(), [a.id, b.id, c.id].sort());
    assert.deepEqual((await rows(h, jobs)).map((r) => r.state), [
      "completed",
      "completed",
      "completed",
      "retryable",
    ]);
  },
);

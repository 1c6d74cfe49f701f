// The background loop of WorkerPool: start(), notify(), drain(), lanes, heartbeats, and two pools on one database.
import assert from "node:assert/strict";
import { createHarness, engineTest, type Harness } from "../_harness.ts";
import { waitFor } from "../_support/wait.ts";
import { type ManualClock, systemClock } from "../../src/clock.ts";
import { Kysely, SqliteDialect } from "kysely";
import { openDatabase } from "../../src/db/database.ts";
import {
  adaptNodeSqlite,
  openSqliteFile,
} from "../../src/db/sqlite_dialect.ts";
import { migrateToLatest } from "../../src/db/migrator.ts";
import type { Database, Db } from "../../src/db/schema.ts";
import { addMs } from "../../src/db/time.ts";
import { createLogger, type Logger } from "../../src/log.ts";
import {
  type AnyJobInput,
  claim,
  countByState,
  enqueueManyUnchecked,
  enqueueUnchecked,
  PRIORITY,
  rescueExpiredLeases,
} from "../../src/jobs/queue.ts";
import {
  type JobHandler,
  WorkerPool,
  type WorkerPoolOptions,
} from "../../src/jobs/worker_pool.ts";

const silent = createLogger("silent");

function pool(
  h: Harness,
  handlers: Record<string, JobHandler>,
  opts: Partial<WorkerPoolOptions> = {},
): WorkerPool {
  return new WorkerPool({
    db: h.container.db,
    clock: h.clock,
    log: silent,
    handlers,
    concurrency: 4,
    pollMs: 10,
    ...opts,
  });
}

async function add(
  db: Db,
  h: Harness,
  job: Partial<AnyJobInput> & { kind: string },
): Promise<string> {
  const id = await enqueueUnchecked(db, {
    payload: {},
    priority: PRIORITY.live,
    ...job,
  }, h.clock.now());
  assert.ok(id);
  return id;
}

async function row(db: Db, id: string) {
  return await db.selectFrom("jobs").selectAll().where("id", "=", id)
    .executeTakeFirstOrThrow();
}

/** Moves the clock on and waits for the heartbeat to extend job `id`'s lease (leaseMs 100) from then. */
async function heartbeat(db: Db, clock: ManualClock, id: string) {
  clock.advance(10_000);
  const extended = addMs(clock.now(), 100).toISOString();
  await waitFor(async () => (await row(db, id)).locked_until === extended, {
    what: "the heartbeat",
  });
}

async function completed(db: Db): Promise<number> {
  return (await countByState(db)).completed!;
}

engineTest("two pools on one database run 500 jobs exactly once", async (h) => {
  const runs = new Map<number, number>();
  const count: JobHandler = async (payload) => {
    const { i } = payload as { i: number };
    runs.set(i, (runs.get(i) ?? 0) + 1);
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  const jobs = Array.from({ length: 500 }, (_, i) => ({
    kind: "t.count",
    payload: { i },
    priority: PRIORITY.live,
  }));
  await enqueueManyUnchecked(h.container.db, jobs, h.clock.now());
  const url = h.container.config.databaseUrl;
  const opened = [openDatabase(url), openDatabase(url)];
  try {
    const pools = opened.map(({ db }, n) =>
      new WorkerPool({
        db,
        clock: h.clock,
        log: silent,
        handlers: { "t.count": count },
        concurrency: 8,
        pollMs: 5,
        workerId: `pool-${n}`,
      })
    );
    for (const p of pools) p.start();
    await waitFor(async () => await completed(h.container.db) === 500, {
      timeoutMs: 60_000,
      what: "500 completed jobs",
    });
    assert.deepEqual(await Promise.all(pools.map((p) => p.drain(5_000))), [
      true,
      true,
    ]);
    assert.equal(runs.size, 500);
    assert.deepEqual([...new Set(runs.values())], [1]);
    assert.equal((await countByState(h.container.db)).running, 0);
    const ran = pools.map((p) => p.stats().ran);
    assert.equal(ran[0]! + ran[1]!, 500);
    assert.ok(ran.every((n) => n > 0), `both pools ran jobs: ${ran}`);
  } finally {
    for (const { db } of opened) await db.destroy();
  }
});

engineTest(
  "drain() does not give back a job whose handler ran and whose settlement is being retried",
  async (h) => {
    // The first settlement of a completed job fails (a database that
    // struggles), so the settler retries it after a backoff longer than the
    // drain timeout. Giving the job back then would run its work twice.
    let failNextComplete = true;
    const db = new Proxy(h.container.db, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target);
        if (prop !== "executeQuery") {
          return typeof value === "function" ? value.bind(target) : value;
        }
        return (query: { sql: string }) => {
          if (failNextComplete && query.sql.includes("'completed'")) {
            failNextComplete = false;
            return Promise.reject(new Error("database is locked"));
          }
          return target.executeQuery(query as never);
        };
      },
    }) as Db;
    let runs = 0;
    const p = pool(h, {
      "t.once": () => {
        runs++;
        return Promise.resolve();
      },
    }, { db });
    const id = await add(db, h, { kind: "t.once" });
    p.start();
    await waitFor(() => runs === 1 && !failNextComplete, {
      what: "the handler to run and its first settlement to fail",
    });
    assert.equal(await p.drain(20), false);
    const r = await row(db, id);
    assert.equal(r.state, "completed");
    assert.equal(runs, 1);
  },
);

engineTest("drain() releases a job still running at the timeout", async (h) => {
  const db = h.container.db;
  let aborted = false;
  const p = pool(h, {
    "t.slow": (_payload, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          aborted = true;
          resolve();
        });
      }),
  });
  const id = await add(db, h, { kind: "t.slow" });
  p.start();
  await waitFor(() => p.stats().running === 1, { what: "the job to start" });
  assert.equal(await p.drain(20), false);
  await waitFor(() => p.stats().running === 0, { what: "the handler to end" });
  assert.ok(aborted, "the handler's signal was aborted");
  const r = await row(db, id);
  assert.equal(r.state, "available");
  assert.equal(r.attempt, 0);
  assert.equal(r.lease_token, null);
  assert.equal(r.run_at, h.clock.now().toISOString());
  assert.equal(JSON.parse(r.errors)[0].error, "Released at shutdown");
});

/** Queues 300 batch jobs (kind t.batch), starts `p` and waits until 3 of them run (`started()`). */
async function startBehindBatch(
  h: Harness,
  p: WorkerPool,
  started: () => number,
): Promise<void> {
  const batch = Array.from({ length: 300 }, (_, i) => ({
    kind: "t.batch",
    payload: { i },
    priority: PRIORITY.batch,
  }));
  await enqueueManyUnchecked(h.container.db, batch, h.clock.now());
  p.start();
  await waitFor(() => started() === 3, { what: "3 batch jobs to start" });
}

engineTest(
  "a live job takes the reserved slot while batch jobs fill the rest",
  async (h) => {
    const db = h.container.db;
    const started: string[] = [];
    let openGate!: () => void;
    const gate = new Promise<void>((resolve) => openGate = resolve);
    const p = pool(h, {
      "t.batch": async () => {
        started.push("batch");
        await gate;
      },
      "t.live": () => {
        started.push("live");
        return Promise.resolve();
      },
    });
    await startBehindBatch(h, p, () => started.length);
    await add(db, h, { kind: "t.live", priority: PRIORITY.live });
    p.notify();
    await waitFor(() => started.includes("live"), { what: "the live job" });
    assert.deepEqual(started, ["batch", "batch", "batch", "live"]);
    openGate();
    await waitFor(async () => await completed(db) === 301, {
      timeoutMs: 30_000,
    });
    assert.equal(await p.drain(5_000), true);
  },
);

engineTest(
  "a live job is claimed while another holds the reserved slot and batch jobs hold the rest, up to the urgent slots",
  async (h) => {
    const db = h.container.db;
    const started: string[] = [];
    // Every job holds its slot until its gate opens: the batch sends and the
    // first live one waiting on a slow upstream.
    const gates: { name: string; open: () => void }[] = [];
    const hold = (name: string) => {
      started.push(name);
      return new Promise<void>((open) => gates.push({ name, open }));
    };
    const openAll = () => gates.splice(0).forEach((g) => g.open());
    const p = pool(h, {
      "t.batch": () => hold("batch"),
      "t.live": (payload) => hold((payload as { name: string }).name),
    }, { urgentSlots: 2 });
    await startBehindBatch(h, p, () => started.length);
    await add(db, h, { kind: "t.live", payload: { name: "live 1" } });
    p.notify();
    await waitFor(() => started.includes("live 1"), { what: "live 1" });
    // Four slots busy: live 2 and 3 take the two urgent slots; live 4, in
    // the same claim, finds none left.
    await enqueueManyUnchecked(
      db,
      ["live 2", "live 3", "live 4"].map((name) => ({
        kind: "t.live",
        payload: { name },
        priority: PRIORITY.live,
      })),
      h.clock.now(),
    );
    p.notify();
    await waitFor(() => started.includes("live 3"), { what: "live 3" });
    assert.deepEqual(started, [
      "batch",
      "batch",
      "batch",
      "live 1",
      "live 2",
      "live 3",
    ]);
    gates.find((g) => g.name === "live 1")!.open();
    await waitFor(() => started.includes("live 4"), { what: "live 4" });
    // No batch job took the slot live 1 gave back.
    assert.equal(started.filter((s) => s === "batch").length, 3);
    await waitFor(async () => {
      openAll();
      return await completed(db) === 304;
    }, { timeoutMs: 30_000, what: "every job" });
    assert.equal(await p.drain(5_000), true);
  },
);

engineTest(
  "notify() wakes an idle pool before its poll interval",
  async (h) => {
    const db = h.container.db;
    const p = pool(h, { "t.n": () => Promise.resolve() }, { pollMs: 600_000 });
    p.start();
    await add(db, h, { kind: "t.n" });
    p.notify();
    await waitFor(async () => await completed(db) === 1, { what: "the job" });
    assert.equal(await p.drain(1_000), true);
  },
);

engineTest("a long job's lease is extended while it runs", async (h) => {
  const db = h.container.db;
  const clock = h.clock as ManualClock;
  let finish!: () => void;
  const p = pool(h, {
    "t.long": () => new Promise<void>((resolve) => finish = resolve),
  }, { leaseMs: 100, concurrency: 1 });
  const id = await add(db, h, { kind: "t.long" });
  p.start();
  await waitFor(() => p.stats().running === 1, { what: "the job to start" });
  await heartbeat(db, clock, id);
  assert.equal(await rescueExpiredLeases(db, clock.now()), 0);
  finish();
  await waitFor(async () => await completed(db) === 1, { what: "the job" });
  assert.equal(await p.drain(1_000), true);
});

engineTest(
  "a long job that starts after the pool emptied and its heartbeat lapsed is beaten too",
  async (h) => {
    const db = h.container.db;
    const clock = h.clock as ManualClock;
    let finish!: () => void;
    const p = pool(h, {
      "t.quick": () => Promise.resolve(),
      "t.long": () => new Promise<void>((resolve) => finish = resolve),
    }, { leaseMs: 100, concurrency: 1 }); // full while the long job runs: no claim, no rescue
    p.start();
    await add(db, h, { kind: "t.quick" });
    p.notify();
    await waitFor(async () => await completed(db) === 1, { what: "a batch" });
    // Past leaseMs/2 of real time: the heartbeat armed by the first job has
    // fired with nothing to beat and lapsed; the next job must arm it again.
    await new Promise((resolve) => setTimeout(resolve, 120));
    const id = await add(db, h, { kind: "t.long" });
    p.notify();
    await waitFor(() => p.stats().running === 1, { what: "the long job" });
    await heartbeat(db, clock, id);
    finish();
    await waitFor(async () => await completed(db) === 2, { what: "the job" });
    assert.equal(await p.drain(1_000), true);
  },
);

engineTest(
  "one heartbeat extends every running job's lease and aborts only the handler whose lease was lost",
  async (h) => {
    const db = h.container.db;
    const clock = h.clock as ManualClock;
    const finish: (() => void)[] = [];
    const aborted = new Set<string>();
    const p = pool(h, {
      "t.long": (_payload, ctx) =>
        new Promise<void>((resolve) => {
          finish.push(resolve);
          ctx.signal.addEventListener("abort", () => {
            aborted.add(ctx.job.id);
            resolve();
          });
        }),
    }, {
      leaseMs: 100,
      concurrency: 3,
      reserveUrgentSlot: false,
      rescueEveryMs: 3_600_000, // the stolen job stays with its new owner
    });
    const ids = [
      await add(db, h, { kind: "t.long" }),
      await add(db, h, { kind: "t.long" }),
      await add(db, h, { kind: "t.long" }),
    ];
    p.start();
    await waitFor(() => p.stats().running === 3, { what: "3 jobs to start" });
    // Another instance took the first job over (its lease token changed).
    await db.updateTable("jobs").set({ lease_token: "stolen" })
      .where("id", "=", ids[0]!).execute();
    clock.advance(10_000);
    const extended = addMs(clock.now(), 100).toISOString();
    await waitFor(() => aborted.size === 1, {
      what: "the handler of the lost lease to be aborted",
    });
    assert.deepEqual([...aborted], [ids[0]]);
    await waitFor(
      async () =>
        (await row(db, ids[1]!)).locked_until === extended &&
        (await row(db, ids[2]!)).locked_until === extended,
      { what: "the other two leases to be extended" },
    );
    assert.notEqual((await row(db, ids[0]!)).locked_until, extended);
    for (const f of finish) f();
    await waitFor(async () => await completed(db) === 2, {
      what: "the two jobs",
    });
    assert.equal(await p.drain(1_000), true);
    assert.equal(aborted.size, 1);
  },
);

Deno.test("a heartbeat is one statement for all the pool's running jobs", async () => {
  await using h = await createHarness();
  const clock = h.clock as ManualClock;
  // The pool on its own connection, recording what it sends.
  const sent: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({
      database: adaptNodeSqlite(openSqliteFile(`${h.dir}/app.db`)),
    }),
    log: (event) => void sent.push(event.query),
  });
  const finish: (() => void)[] = [];
  const p = new WorkerPool({
    db,
    clock,
    log: silent,
    handlers: {
      "t.long": () => new Promise<void>((resolve) => finish.push(resolve)),
    },
    concurrency: 4,
    leaseMs: 100,
    reserveUrgentSlot: false,
  });
  for (let i = 0; i < 4; i++) await add(db, h, { kind: "t.long" });
  p.start();
  await waitFor(() => p.stats().running === 4, { what: "4 jobs to start" });
  // Each lease extension sent, with the number of jobs it carries.
  const extensions = () =>
    sent.filter((q) =>
      /^update "?jobs"? set "?locked_until/i.test(q.sql.trim())
    )
      .map((q) => {
        const list = q.parameters.find((v) =>
          typeof v === "string" && v.startsWith("[[")
        );
        return list === undefined ? 1 : JSON.parse(list as string).length;
      });
  const before = extensions().length;
  clock.advance(10_000);
  const extended = addMs(clock.now(), 100).toISOString();
  await waitFor(async () => {
    const rows = await db.selectFrom("jobs").select("locked_until").execute();
    return rows.every((r) => r.locked_until === extended);
  }, { what: "the 4 leases to be extended" });
  // Real-time beats may come more than once while the test looks; each
  // carries all four jobs.
  const beats = extensions().slice(before);
  assert.ok(beats.length >= 1);
  assert.deepEqual(beats, beats.map(() => 4));
  for (const f of finish) f();
  await waitFor(async () => await completed(db) === 4, { what: "the jobs" });
  assert.equal(await p.drain(1_000), true);
  await db.destroy();
});

engineTest("a handler whose lease was rescued is aborted", async (h) => {
  const db = h.container.db;
  const clock = h.clock as ManualClock;
  const attempts: number[] = [];
  let abortedFirst = false;
  const p = pool(h, {
    "t.hung": (_payload, ctx) => {
      attempts.push(ctx.job.attempt);
      if (ctx.job.attempt > 1) return Promise.resolve();
      return new Promise<void>((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          abortedFirst = true;
          resolve();
        });
      });
    },
  }, { leaseMs: 100, concurrency: 1 });
  const id = await add(db, h, { kind: "t.hung" });
  p.start();
  await waitFor(() => p.stats().running === 1, { what: "the job to start" });
  clock.advance(1_000);
  assert.equal(await rescueExpiredLeases(db, addMs(clock.now(), 1_000)), 1);
  clock.advance(1_000);
  p.notify();
  await waitFor(async () => await completed(db) === 1, { what: "the rerun" });
  assert.equal(await p.drain(1_000), true);
  assert.ok(abortedFirst);
  assert.deepEqual(attempts, [1, 2]);
  assert.match(
    JSON.parse((await row(db, id)).errors)[0].error,
    /^Lease expired/,
  );
});

interface Line {
  level: string;
  msg: string;
}

function recordingLogger(lines: Line[]): Logger {
  const write = (level: string) => (msg: string) => {
    lines.push({ level, msg });
  };
  const log: Logger = {
    debug: write("debug"),
    info: write("info"),
    warn: write("warn"),
    error: write("error"),
    child: () => log,
  };
  return log;
}

Deno.test("the pool logs database errors, backs off and carries on", async () => {
  await using h = await createHarness();
  const lines: Line[] = [];
  const { db } = openDatabase(`file:${h.dir}/not-migrated.db`);
  try {
    const p = new WorkerPool({
      db,
      clock: h.clock,
      log: recordingLogger(lines),
      handlers: { "t.ok": () => Promise.resolve() },
      concurrency: 2,
      pollMs: 5,
    });
    p.start();
    await waitFor(
      () => lines.filter((l) => l.msg === "Cannot claim jobs").length >= 2,
      { what: "two failed claims" },
    );
    await migrateToLatest(db);
    await add(db, h, { kind: "t.ok" });
    await waitFor(async () => await completed(db) === 1, {
      timeoutMs: 20_000,
      what: "the job after the database recovered",
    });
    assert.equal(await p.drain(1_000), true);
    assert.ok(
      lines.every((l) => l.level !== "error" || l.msg === "Cannot claim jobs"),
    );
  } finally {
    await db.destroy();
  }
});

Deno.test({
  name: "a running pool rescues a dead worker's expired lease and runs the job",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createHarness({ clock: systemClock });
    const db = h.container.db;
    await enqueueUnchecked(
      db,
      { kind: "t.work", payload: {}, priority: 0 },
      new Date(),
    );
    // A worker that claims with a 50 ms lease and then "dies".
    const [dead] = await claim(db, {
      workerId: "dead",
      limit: 1,
      leaseMs: 50,
      now: new Date(),
    });
    assert.ok(dead);
    let ran = 0;
    const pool = new WorkerPool({
      db,
      clock: systemClock,
      log: createLogger("silent"),
      handlers: { "t.work": () => Promise.resolve(void ran++) },
      concurrency: 2,
      pollMs: 10,
      rescueEveryMs: 20,
    });
    pool.start();
    try {
      await waitFor(() => ran === 1, {
        timeoutMs: 5_000,
        what: "the rescued job to run",
      });
    } finally {
      await pool.drain(1_000);
    }
    const row = await db.selectFrom("jobs").selectAll()
      .executeTakeFirstOrThrow();
    assert.equal(row.state, "completed");
    assert.equal(row.attempt, 2);
  },
});

import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import { AppError } from "../../src/errors.ts";
import { createLogger } from "../../src/log.ts";
import {
  type AnyJobInput,
  countByState,
  enqueueUnchecked,
  PRIORITY,
} from "../../src/jobs/queue.ts";
import {
  type JobHandler,
  Snooze,
  WorkerPool,
} from "../../src/jobs/worker_pool.ts";

function pool(h: Harness, handlers: Record<string, JobHandler>): WorkerPool {
  return new WorkerPool({
    db: h.container.db,
    clock: h.clock,
    log: createLogger("silent"),
    handlers,
    concurrency: 4,
    // As lifecycle.ts: outcomes of several kinds settle in one batch there.
    plans: h.container.engine === "libsql" ? h.container.commits : undefined,
  });
}

async function add(h: Harness, job: Partial<AnyJobInput> & { kind: string }) {
  const id = await enqueueUnchecked(h.container.db, {
    payload: {},
    priority: PRIORITY.live,
    ...job,
  }, h.clock.now());
  assert.ok(id);
  return id;
}

async function row(h: Harness, id: string) {
  return await h.container.db.selectFrom("jobs").selectAll()
    .where("id", "=", id).executeTakeFirstOrThrow();
}

engineTest(
  "runOnce() runs every due job with its parsed payload",
  async (h) => {
    const seen: unknown[] = [];
    const p = pool(h, {
      "t.echo": (payload, ctx) => {
        seen.push({ payload, attempt: ctx.job.attempt });
        return Promise.resolve();
      },
    });
    for (let i = 0; i < 6; i++) {
      await add(h, {
        kind: "t.echo",
        payload: { i },
      });
    }
    assert.equal(await p.runOnce(), 6);
    assert.equal(await p.runOnce(), 0);
    assert.deepEqual(
      seen.map((s) => (s as { payload: { i: number } }).payload.i).sort(),
      [0, 1, 2, 3, 4, 5],
    );
    assert.equal((await countByState(h.container.db)).completed, 6);
    assert.deepEqual(p.stats(), { running: 0, ran: 6, failed: 0 });
  },
);

engineTest(
  "runOnce() retries a retryable failure after the backoff",
  async (h) => {
    let calls = 0;
    const p = pool(h, {
      "t.flaky": () => {
        calls++;
        if (calls === 1) throw new Error("connection reset");
        return Promise.resolve();
      },
    });
    const id = await add(h, { kind: "t.flaky" });
    assert.equal(await p.runOnce(), 1);
    const failed = await row(h, id);
    assert.equal(failed.state, "retryable");
    assert.equal(JSON.parse(failed.errors)[0].error, "Error: connection reset");
    assert.equal(await p.runOnce(), 0, "not due before the backoff");
    (h.clock as ManualClock).set(failed.run_at);
    assert.equal(await p.runOnce(), 1);
    assert.equal((await row(h, id)).state, "completed");
    assert.equal(calls, 2);
    assert.deepEqual(p.stats(), { running: 0, ran: 2, failed: 1 });
  },
);

engineTest("runOnce() honours an AppError's retryAfterMs", async (h) => {
  const p = pool(h, {
    "t.throttled": () => {
      throw new AppError("RATE_LIMITED", "Slow down", {
        retryable: true,
        retryAfterMs: 90_000,
      });
    },
  });
  const id = await add(h, { kind: "t.throttled" });
  await p.runOnce();
  const r = await row(h, id);
  assert.equal(r.state, "retryable");
  assert.equal(Date.parse(r.run_at) - h.clock.now().getTime(), 90_000);
  assert.equal(JSON.parse(r.errors)[0].error, "RATE_LIMITED: Slow down");
});

engineTest(
  "runOnce() discards a permanent failure and leaves an unknown kind to other instances",
  async (h) => {
    const p = pool(h, {
      "t.bad": () => {
        throw new AppError("VALIDATION_ERROR", "Bad payload");
      },
    });
    const bad = await add(h, { kind: "t.bad" });
    const unknown = await add(h, { kind: "t.nobody" });
    assert.equal(await p.runOnce(), 1);
    const r1 = await row(h, bad);
    assert.equal(r1.state, "discarded");
    assert.equal(
      JSON.parse(r1.errors)[0].error,
      "VALIDATION_ERROR: Bad payload",
    );
    // A newer build's kind: never claimed here, so never discarded by an older instance.
    const r2 = await row(h, unknown);
    assert.equal(r2.state, "available");
    assert.equal(r2.attempt, 0);
  },
);

engineTest(
  "runOnce() re-runs a snoozed job later without counting an attempt",
  async (h) => {
    const attempts: number[] = [];
    const p = pool(h, {
      "t.sleepy": (_payload, ctx) => {
        attempts.push(ctx.job.attempt);
        if (attempts.length === 1) throw new Snooze(60_000, "Governor full");
        return Promise.resolve();
      },
    });
    const id = await add(h, { kind: "t.sleepy" });
    assert.equal(await p.runOnce(), 1);
    const snoozed = await row(h, id);
    assert.equal(snoozed.state, "available");
    assert.equal(snoozed.attempt, 0);
    assert.equal(snoozed.errors, "[]");
    assert.equal(await p.runOnce(), 0);
    (h.clock as ManualClock).advance(60_000);
    assert.equal(await p.runOnce(), 1);
    assert.deepEqual(attempts, [1, 1]);
    assert.equal((await row(h, id)).state, "completed");
  },
);

engineTest("a throwing handler never leaves its job running", async (h) => {
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  const hostile = new Proxy({}, {
    getPrototypeOf() {
      throw new Error("no prototype for you");
    },
  });
  const throwers: Record<string, JobHandler> = {
    "t.sync": () => {
      throw new TypeError("sync throw");
    },
    "t.string": () => Promise.reject("just a string"),
    "t.null": () => Promise.reject(null),
    "t.circular": () => Promise.reject(circular),
    "t.hostile": () => Promise.reject(hostile),
    "t.nan": () => Promise.reject(new Snooze(Number.NaN)),
    "t.retryable": () =>
      Promise.reject(
        new AppError("UPSTREAM_UNAVAILABLE", "Down", {
          retryable: true,
          retryAfterMs: Number.POSITIVE_INFINITY,
        }),
      ),
  };
  const p = pool(h, throwers);
  for (const kind of Object.keys(throwers)) await add(h, { kind });
  assert.equal(await p.runOnce({ maxJobs: 7 }), 7);
  const counts = await countByState(h.container.db);
  assert.equal(counts.running, 0);
  assert.equal(counts.retryable, 6);
  assert.equal(counts.available, 1, "the NaN snooze runs again now");
  const errors = await h.container.db.selectFrom("jobs")
    .select(["kind", "errors"]).where("kind", "in", ["t.circular", "t.null"])
    .orderBy("kind").execute();
  assert.match(JSON.parse(errors[0]!.errors)[0].error, /cannot be described/);
  assert.equal(JSON.parse(errors[1]!.errors)[0].error, "Error: null");
});

engineTest("runOnce() stops at maxJobs", async (h) => {
  const p = pool(h, { "t.n": () => Promise.resolve() });
  for (let i = 0; i < 5; i++) await add(h, { kind: "t.n" });
  assert.equal(await p.runOnce({ maxJobs: 3 }), 3);
  assert.equal((await countByState(h.container.db)).available, 2);
});

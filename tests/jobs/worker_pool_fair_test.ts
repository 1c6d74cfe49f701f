// A worker pool with maxPerOwner (the webhook pool: an account's attempts
// in flight, WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT): one account's slow jobs keep
// to its share while another account's run beside them, and a job stops
// counting for its account whichever way it ends.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { gate, waitFor } from "../_support/wait.ts";
import type { ManualClock } from "../../src/clock.ts";
import { createLogger } from "../../src/log.ts";
import {
  countByState,
  enqueueManyUnchecked,
  PRIORITY,
} from "../../src/jobs/queue.ts";
import {
  type JobHandler,
  WorkerPool,
  type WorkerPoolOptions,
} from "../../src/jobs/worker_pool.ts";

function jobs(n: number, kind: string, groupKey: string, mode = "") {
  return Array.from({ length: n }, (_, i) => ({
    kind,
    payload: { i, mode },
    priority: PRIORITY.webhook,
    groupKey,
  }));
}

function pool(
  h: Harness,
  handlers: Record<string, JobHandler>,
  opts: Partial<WorkerPoolOptions> = {},
): WorkerPool {
  return new WorkerPool({
    db: h.container.db,
    clock: h.clock,
    log: createLogger("silent"),
    handlers,
    concurrency: 8,
    maxPerGroup: 16,
    reserveUrgentSlot: false,
    pollMs: 5,
    ...opts,
  });
}

engineTest(
  "a pool with maxPerOwner runs that many of one account's jobs and another account's beside them",
  async (h) => {
    const db = h.container.db;
    const subscriptions = Array.from({ length: 12 }, (_, i) => `a/${i + 10}`);
    await enqueueManyUnchecked(db, [
      ...subscriptions.flatMap((g) => jobs(5, "t.slow", g)),
      ...jobs(3, "t.fast", "b/1"),
    ], h.clock.now());
    let slowRunning = 0;
    let peak = 0;
    let fastDone = 0;
    const release = gate();
    const p = pool(h, {
      "t.slow": async () => {
        peak = Math.max(peak, ++slowRunning);
        await release.opened;
        slowRunning--;
      },
      "t.fast": () => {
        fastDone++;
        return Promise.resolve();
      },
    }, { maxPerOwner: 2 });
    p.start();
    try {
      await waitFor(() => fastDone === 3 && slowRunning === 2, {
        what: "account b's jobs done beside account a's two",
      });
      assert.equal(peak, 2);
      release.open();
      await waitFor(async () => (await countByState(db)).completed === 63, {
        what: "every job done",
      });
      assert.equal(peak, 2, "never more than 2 of account a at once");
    } finally {
      release.open();
      await p.drain(2_000);
    }
  },
);

engineTest(
  "a job stops counting for its account when it succeeds, fails, loses its lease or is released at shutdown",
  async (h) => {
    const db = h.container.db;
    const clock = h.clock as ManualClock;
    // One account, one attempt at a time, each path on its own subscription
    // (visited in turn): the next starts only once the last one's slot is free.
    await enqueueManyUnchecked(db, [
      ...jobs(1, "t.path", "a/1", "succeed"),
      ...jobs(1, "t.path", "a/2", "fail"),
      ...jobs(1, "t.path", "a/3", "lose"),
      ...jobs(1, "t.path", "a/4", "shutdown"),
    ], clock.now());
    const started: string[] = [];
    let running = 0;
    let peak = 0;
    const gates = new Map<string, ReturnType<typeof gate>>();
    const p = pool(h, {
      "t.path": async (payload, ctx) => {
        const mode = (payload as { mode: string }).mode;
        started.push(mode);
        peak = Math.max(peak, ++running);
        const g = gate();
        gates.set(mode, g);
        ctx.signal.addEventListener("abort", () => g.open());
        try {
          await g.opened;
          if (mode === "fail") throw new Error("Receiver answered 500");
        } finally {
          running--;
        }
      },
    }, { maxPerOwner: 1, leaseMs: 100, rescueEveryMs: 3_600_000 });
    const next = (mode: string) =>
      waitFor(() => gates.get(mode), { what: `the "${mode}" job to start` });
    p.start();
    (await next("succeed")).open();
    (await next("fail")).open();
    await next("lose");
    // Another instance took it over: the heartbeat finds the lease gone and
    // aborts the handler.
    await db.updateTable("jobs").set({ lease_token: "stolen" })
      .where("group_key", "=", "a/3").execute();
    clock.advance(10_000);
    await next("shutdown");
    assert.deepEqual(started, ["succeed", "fail", "lose", "shutdown"]);
    assert.equal(peak, 1, "one of the account's jobs at a time");
    assert.equal(await p.drain(50), false, "the last one was still running");
    assert.equal(p.stats().running, 0);
    const rows = await db.selectFrom("jobs").select(["group_key", "state"])
      .orderBy("group_key").execute();
    assert.deepEqual(rows.map((r) => r.state), [
      "completed",
      "retryable",
      "running", // the other instance's now
      "available", // given back for another instance to run
    ]);
  },
);

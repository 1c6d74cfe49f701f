import assert from "node:assert/strict";
import { keyRow } from "../_support/group_commit.ts";
import { planProbe } from "../_support/plans.ts";
import { createHarness, engineTest, type Harness } from "../_harness.ts";
import { systemClock } from "../../src/clock.ts";
import { createLogger } from "../../src/log.ts";
import { gate, waitFor } from "../_support/wait.ts";
import {
  claim,
  countByState,
  enqueueManyUnchecked,
  enqueueUnchecked,
  PRIORITY,
} from "../../src/jobs/queue.ts";
import {
  nextAfter,
  parkGroup,
  ringOrder,
} from "../../src/jobs/queue_groups.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";
import { JobInsertHook } from "../../src/db/job_insert_hook.ts";

const LEASE_MS = 30_000;

function jobs(kind: string, n: number, extra: Record<string, unknown> = {}) {
  return Array.from({ length: n }, (_, i) => ({
    kind,
    payload: { i },
    priority: PRIORITY.webhook,
    ...extra,
  }));
}

Deno.test("ringOrder() visits every member once, from just after the last start, wrapping around", () => {
  const keys = ["a", "b", "c"];
  assert.deepEqual(ringOrder(keys, undefined), [null, "a", "b", "c"]);
  assert.deepEqual(ringOrder(keys, null), ["a", "b", "c", null]);
  assert.deepEqual(ringOrder(keys, "a"), ["b", "c", null, "a"]);
  assert.deepEqual(ringOrder(keys, "c"), [null, "a", "b", "c"]);
  assert.deepEqual(
    ringOrder(keys, "bb"),
    ["c", null, "a", "b"],
    "a start that has since left the ring",
  );
  const job = (groupKey: string | null) => ({ groupKey });
  assert.equal(nextAfter("a", [job("a"), job("c")]), "c", "c came first");
  assert.equal(nextAfter("a", [job(null), job("a")]), null);
  assert.equal(nextAfter("b", []), "b", "nothing claimed: unchanged");
});

engineTest(
  "claim() with groups skips full groups and takes no group past its cap",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(db, [
      ...jobs("t.w", 10, { groupKey: "a" }),
      ...jobs("t.w", 10, { groupKey: "b" }),
      ...jobs("t.w", 3),
    ], now);
    const running = new Map([["a", 4], ["b", 1]]);
    const taken: string[] = [];
    for (;;) {
      const claimed = await claim(db, {
        workerId: "w",
        limit: 20,
        leaseMs: LEASE_MS,
        now,
        groups: { cap: 4, running },
      });
      if (claimed.length === 0) break;
      for (const j of claimed) {
        const g = j.groupKey ?? "none";
        taken.push(g);
        if (j.groupKey) running.set(g, (running.get(g) ?? 0) + 1);
      }
    }
    const count = (g: string) => taken.filter((t) => t === g).length;
    assert.equal(count("a"), 0, "a was full");
    assert.equal(count("b"), 3, "b had 1 of 4 running");
    assert.equal(count("none"), 3, "jobs without a group are not capped");
    assert.equal(running.get("b"), 4);
  },
);

engineTest(
  "claim() with lanes takes only those priorities, most urgent first",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(db, [
      { kind: "t.x", payload: {}, priority: PRIORITY.live },
      { kind: "t.x", payload: {}, priority: PRIORITY.webhook },
      { kind: "t.x", payload: {}, priority: PRIORITY.webhookManual },
      { kind: "t.x", payload: {}, priority: PRIORITY.batch },
    ], now);
    const webhook = await claim(db, {
      workerId: "w",
      limit: 10,
      leaseMs: LEASE_MS,
      now,
      lanes: [PRIORITY.webhook, PRIORITY.webhookManual],
    });
    assert.deepEqual(webhook.map((j) => j.priority), [
      PRIORITY.webhookManual,
      PRIORITY.webhook,
    ]);
    const rest = await claim(db, {
      workerId: "w",
      limit: 10,
      leaseMs: LEASE_MS,
      now,
      lanes: [PRIORITY.live, PRIORITY.batch],
    });
    assert.deepEqual(rest.map((j) => j.priority), [
      PRIORITY.live,
      PRIORITY.batch,
    ]);
  },
);

Deno.test("claim() with lanes reads the claim index as one range per lane, without sorting", async () => {
  await using h = await createHarness();
  await enqueueUnchecked(h.container.db, {
    kind: "t.a",
    payload: {},
    priority: PRIORITY.batch,
  }, h.clock.now());
  await using probe = planProbe(`${h.dir}/app.db`);
  const plans = await probe.plansOf((db) =>
    claim(db, {
      workerId: "w",
      limit: 5,
      leaseMs: LEASE_MS,
      now: h.clock.now(),
      lanes: [PRIORITY.live, PRIORITY.inbound, PRIORITY.batch],
      kinds: ["t.a", "t.b"],
    })
  );
  assert.equal(plans.length, 2, "the read that asks first, then the claim");
  for (const plan of plans) {
    assert.match(
      plan,
      /USING INDEX jobs_claim_idx \(priority=\? AND run_at<\?\)/,
    );
    assert.doesNotMatch(plan, /TEMP B-TREE/);
  }
});

engineTest(
  "a pool with maxPerGroup runs at most that many jobs of one group, and the others alongside",
  async (h: Harness) => {
    const db = h.container.db;
    await enqueueManyUnchecked(db, [
      ...jobs("t.slow", 12, { groupKey: "dead" }),
      ...jobs("t.slow", 2, { groupKey: "healthy" }),
    ], systemClock.now());
    const running = new Map<string, number>();
    let peakDead = 0;
    const release = gate();
    const pool = new WorkerPool({
      db,
      clock: systemClock,
      log: createLogger("silent"),
      handlers: {
        "t.slow": async (_payload, ctx) => {
          const g = ctx.job.groupKey!;
          running.set(g, (running.get(g) ?? 0) + 1);
          peakDead = Math.max(peakDead, running.get("dead") ?? 0);
          await release.opened;
          running.set(g, running.get(g)! - 1);
        },
      },
      concurrency: 8,
      maxPerGroup: 3,
      reserveUrgentSlot: false,
      pollMs: 5,
    });
    pool.start();
    try {
      await waitFor(() => (running.get("healthy") ?? 0) === 2, {
        what: "both healthy jobs running beside the dead group",
      });
      assert.equal(running.get("dead"), 3);
      release.open();
      await waitFor(async () => (await countByState(db)).completed === 14, {
        what: "every job done",
      });
      assert.equal(peakDead, 3);
    } finally {
      release.open();
      await pool.drain(2_000);
    }
  },
  { clock: systemClock },
);

engineTest(
  "completeIn() ends the job in the handler's transaction, and a rollback undoes it",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    const ok = await enqueueUnchecked(db, {
      kind: "t.in",
      payload: { fail: false },
      priority: 0,
    }, now);
    const bad = await enqueueUnchecked(db, {
      kind: "t.in",
      payload: { fail: true },
      priority: 0,
    }, now);
    const pool = new WorkerPool({
      db,
      clock: h.clock,
      log: createLogger("silent"),
      handlers: {
        "t.in": async (payload, ctx) => {
          await db.transaction().execute(async (trx) => {
            await trx.insertInto("idempotency_keys")
              .values(keyRow(h.tenant.account.id, ctx.job.id)).execute();
            assert.equal(await ctx.completeIn(trx), true);
            if ((payload as { fail: boolean }).fail) throw new Error("after");
          });
        },
      },
      concurrency: 2,
    });
    assert.equal(await pool.runOnce(), 2);
    const state = async (
      id: string | null,
    ) => (await db.selectFrom("jobs").select(["state", "errors"]).where(
      "id",
      "=",
      id!,
    )
      .executeTakeFirstOrThrow());
    assert.equal((await state(ok)).state, "completed");
    const failed = await state(bad);
    assert.equal(failed.state, "retryable");
    assert.match(failed.errors, /after/);
    const keys = await db.selectFrom("idempotency_keys").select("key")
      .execute();
    assert.deepEqual(keys.map((k) => k.key), [ok]);
  },
  { allowTransactions: true },
);

engineTest(
  "JobInsertHook fires after inserts into jobs, with their lanes, and only those",
  async (h) => {
    const calls: Array<Set<number> | undefined> = [];
    const db = h.container.db.withPlugin(
      new JobInsertHook((lanes) => calls.push(lanes)),
    );
    await db.insertInto("idempotency_keys")
      .values(keyRow(h.tenant.account.id, "k")).execute();
    assert.equal(calls.length, 0);
    await db.transaction().execute(async (trx) => {
      await enqueueUnchecked(trx, {
        kind: "t.k",
        payload: {},
        priority: PRIORITY.inbound,
      }, h.clock.now());
      assert.equal(calls.length, 1, "on the statement, before the commit");
    });
    assert.deepEqual(calls[0], new Set([PRIORITY.inbound]));
    await enqueueManyUnchecked(db, [
      ...jobs("t.k", 3),
      { kind: "t.k", payload: {}, priority: PRIORITY.batch },
    ], h.clock.now());
    assert.equal(calls.length, 2, "one multi-row insert, one call");
    assert.deepEqual(calls[1], new Set([PRIORITY.webhook, PRIORITY.batch]));
  },
  { allowTransactions: true },
);

engineTest(
  "parkGroup() moves a group's due backlog past its first jobs out of the due range",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(db, [
      ...jobs("t.w", 50, { groupKey: "slow" }),
      ...jobs("t.w", 5, { groupKey: "fast" }),
    ], now);
    const until = new Date(now.getTime() + 5_000);
    const moved = await parkGroup(db, {
      groupKey: "slow",
      keep: 16,
      until,
      now,
    });
    assert.equal(moved, 34);
    const due = await db.selectFrom("jobs").select(["group_key", "run_at"])
      .where("run_at", "<=", now.toISOString()).execute();
    assert.equal(due.filter((j) => j.group_key === "slow").length, 16);
    assert.equal(due.filter((j) => j.group_key === "fast").length, 5);
    const parked = await db.selectFrom("jobs").select("run_at")
      .where("run_at", "=", until.toISOString()).execute();
    assert.equal(parked.length, 34);
  },
);

engineTest(
  "a pool parks the backlog of a slow full group and brings it back once the group is fast again",
  async (h) => {
    const db = h.container.db;
    await enqueueManyUnchecked(
      db,
      jobs("t.slow", 40, { groupKey: "slow" }),
      systemClock.now(),
    );
    const release = gate();
    let running = 0;
    const pool = new WorkerPool({
      db,
      clock: systemClock,
      log: createLogger("silent"),
      handlers: {
        "t.slow": async () => {
          running++;
          await release.opened;
        },
      },
      concurrency: 8,
      maxPerGroup: 3,
      reserveUrgentSlot: false,
      pollMs: 5,
    });
    pool.start();
    try {
      await waitFor(() => running === 3, { what: "the group at its cap" });
      // Slow for a second: all but 2 x cap of the due backlog moves 30 s ahead.
      await waitFor(async () => {
        const due = await db.selectFrom("jobs").select("id")
          .where("state", "=", "available")
          .where("run_at", "<=", systemClock.now().toISOString()).execute();
        return due.length === 6;
      }, { what: "the backlog parked" });
      // Fast again: the parked jobs come back long before their 30 s.
      release.open();
      await waitFor(async () => (await countByState(db)).completed === 40, {
        timeoutMs: 10_000,
        what: "every job done",
      });
    } finally {
      release.open();
      await pool.drain(2_000);
    }
  },
  { clock: systemClock },
);

engineTest(
  "a pool never parks a group that is full only for a moment",
  async (h) => {
    const db = h.container.db;
    const now = systemClock.now();
    await enqueueManyUnchecked(
      db,
      jobs("t.fast", 200, { groupKey: "busy" }),
      now,
    );
    const pool = new WorkerPool({
      db,
      clock: systemClock,
      log: createLogger("silent"),
      handlers: { "t.fast": () => new Promise((r) => setTimeout(r, 2)) },
      concurrency: 8,
      maxPerGroup: 3,
      reserveUrgentSlot: false,
      pollMs: 5,
    });
    pool.start();
    try {
      await waitFor(async () => (await countByState(db)).completed === 200, {
        what: "every job done",
      });
    } finally {
      await pool.drain(2_000);
    }
    const moved = await db.selectFrom("jobs").select("id")
      .where("run_at", ">", now.toISOString()).execute();
    assert.equal(moved.length, 0, "no job was parked");
  },
  { clock: systemClock },
);

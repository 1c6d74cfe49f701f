import assert from "node:assert/strict";
import { planProbe } from "../_support/plans.ts";
import { createHarness, engineTest, type Harness } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import { addMs } from "../../src/db/time.ts";
import {
  claim,
  type ClaimOptions,
  complete,
  completeMany,
  countByState,
  enqueueManyUnchecked,
  enqueueUnchecked,
  fail,
  failMany,
  PRIORITY,
  pruneFinished,
  release,
  rescueExpiredLeases,
} from "../../src/jobs/queue.ts";

const LEASE_MS = 30_000;

function clockOf(h: Harness): ManualClock {
  return h.clock as ManualClock;
}

function claimDue(h: Harness, limit = 10, workerId = "w1") {
  return claim(h.container.db, {
    workerId,
    limit,
    leaseMs: LEASE_MS,
    now: h.clock.now(),
  });
}

/** Claim options for 5 jobs now, with `extra` on top. */
function claimOptions(h: Harness, extra: Partial<ClaimOptions>): ClaimOptions {
  return {
    workerId: "w",
    limit: 5,
    leaseMs: LEASE_MS,
    now: h.clock.now(),
    ...extra,
  };
}

async function row(h: Harness, id: string | null) {
  assert.ok(id, "the job was enqueued");
  return await h.container.db.selectFrom("jobs").selectAll()
    .where("id", "=", id).executeTakeFirstOrThrow();
}

engineTest("claim() takes jobs by priority, then run_at", async (h) => {
  const db = h.container.db;
  const now = h.clock.now();
  const batch = await enqueueUnchecked(db, {
    kind: "t.batch",
    payload: { n: 1 },
    priority: PRIORITY.batch,
    runAt: addMs(now, -3_000),
  }, now);
  const liveLater = await enqueueUnchecked(db, {
    kind: "t.live",
    payload: { n: 2 },
    priority: PRIORITY.live,
    runAt: addMs(now, -1_000),
  }, now);
  const liveEarlier = await enqueueUnchecked(db, {
    kind: "t.live",
    payload: { n: 3 },
    priority: PRIORITY.live,
    runAt: addMs(now, -2_000),
  }, now);
  const jobs = await claimDue(h);
  assert.deepEqual(jobs.map((j) => j.id), [liveEarlier, liveLater, batch]);
  assert.deepEqual(jobs[0]!.payload, { n: 3 });
  assert.equal(jobs[0]!.attempt, 1);
  assert.match(jobs[0]!.leaseToken, /^[0-9a-f]{32}$/);
  assert.equal(new Set(jobs.map((j) => j.leaseToken)).size, 3);
  const stored = await row(h, jobs[0]!.id);
  assert.equal(stored.state, "running");
  assert.equal(stored.locked_by, "w1");
  assert.equal(stored.locked_until, addMs(now, LEASE_MS).toISOString());
});

engineTest("claim() leaves jobs whose run_at is in the future", async (h) => {
  const now = h.clock.now();
  const id = await enqueueUnchecked(h.container.db, {
    kind: "t.later",
    payload: {},
    priority: PRIORITY.live,
    runAt: addMs(now, 60_000),
  }, now);
  assert.deepEqual(await claimDue(h), []);
  clockOf(h).advance(60_000);
  assert.deepEqual((await claimDue(h)).map((j) => j.id), [id]);
});

engineTest("claim() filters by kind and by highest priority", async (h) => {
  const db = h.container.db;
  const now = h.clock.now();
  await enqueueManyUnchecked(db, [
    { kind: "t.a", payload: {}, priority: PRIORITY.batch },
    { kind: "t.b", payload: {}, priority: PRIORITY.inbound },
  ], now);
  const base = { workerId: "w", limit: 10, leaseMs: LEASE_MS, now };
  const urgent = await claim(db, { ...base, maxPriority: PRIORITY.inbound });
  assert.deepEqual(urgent.map((j) => j.kind), ["t.b"]);
  assert.deepEqual(await claim(db, { ...base, kinds: ["t.b"] }), []);
  assert.deepEqual(await claim(db, { ...base, kinds: [] }), []);
  const rest = await claim(db, { ...base, kinds: ["t.a", "t.c"] });
  assert.deepEqual(rest.map((j) => j.kind), ["t.a"]);
});

engineTest("enqueue() returns null for a unique key that exists", async (h) => {
  const db = h.container.db;
  const now = h.clock.now();
  const job = {
    kind: "t.once",
    payload: {},
    priority: PRIORITY.batch,
    uniqueKey: "k1",
  };
  const id = await enqueueUnchecked(db, job, now);
  assert.equal(typeof id, "string");
  assert.equal(await enqueueUnchecked(db, job, now), null);
  const [claimed] = await claimDue(h);
  assert.ok(await complete(db, claimed!, now));
  assert.equal(
    await enqueueUnchecked(db, job, now),
    null,
    "finished jobs still dedupe",
  );
  assert.equal((await countByState(db)).completed, 1);
});

engineTest(
  "enqueueMany() inserts in chunks and skips existing unique keys",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueUnchecked(db, {
      kind: "t.m",
      payload: {},
      priority: PRIORITY.batch,
      uniqueKey: "m-7",
    }, now);
    const jobs = Array.from({ length: 250 }, (_, i) => ({
      kind: "t.m",
      payload: { i },
      priority: PRIORITY.batch,
      uniqueKey: `m-${i}`,
    }));
    await enqueueManyUnchecked(db, jobs, now);
    assert.deepEqual(await countByState(db), {
      available: 250,
      running: 0,
      retryable: 0,
      completed: 0,
      discarded: 0,
    });
  },
);

engineTest(
  "a claimed job is claimed again only after its lease is rescued",
  async (h) => {
    const db = h.container.db;
    const id = await enqueueUnchecked(db, {
      kind: "t.lease",
      payload: {},
      priority: PRIORITY.live,
    }, h.clock.now());
    const [first] = await claimDue(h, 10, "w1");
    assert.equal(first!.id, id);
    assert.deepEqual(await claimDue(h, 10, "w2"), []);

    clockOf(h).advance(LEASE_MS - 1);
    assert.equal(await rescueExpiredLeases(db, h.clock.now()), 0);
    clockOf(h).advance(2);
    assert.equal(await rescueExpiredLeases(db, h.clock.now()), 1);

    const [second] = await claimDue(h, 10, "w2");
    assert.equal(second!.id, id);
    assert.equal(second!.attempt, 2);
    assert.notEqual(second!.leaseToken, first!.leaseToken);
    assert.equal(second!.errors.length, 1);
    assert.match(
      second!.errors[0]!.error,
      /^Lease expired at .* on worker "w1"$/,
    );
    assert.equal(await complete(db, first!, h.clock.now()), false);
    assert.equal(
      await fail(db, first!, {
        error: "late",
        retryable: true,
        now: h.clock.now(),
      }),
      "lost",
    );
    assert.equal(await complete(db, second!, h.clock.now()), true);
    assert.equal((await row(h, id)).state, "completed");
  },
);

engineTest(
  "rescueExpiredLeases() gives a job lost on its last attempt one more run, then discards it",
  async (h) => {
    const db = h.container.db;
    const id = await enqueueUnchecked(db, {
      kind: "t.poison",
      payload: {},
      priority: PRIORITY.live,
      maxAttempts: 1,
    }, h.clock.now());
    await claimDue(h);
    clockOf(h).advance(LEASE_MS + 1);
    assert.equal(await rescueExpiredLeases(db, h.clock.now()), 1);
    assert.equal((await row(h, id)).state, "retryable");
    await claimDue(h);
    clockOf(h).advance(LEASE_MS + 1);
    assert.equal(await rescueExpiredLeases(db, h.clock.now()), 1);
    const r = await row(h, id);
    assert.equal(r.state, "discarded");
    assert.equal(r.finalized_at, h.clock.now().toISOString());
  },
);

engineTest(
  "fail() retries with backoff, then discards at max_attempts, keeping every error",
  async (h) => {
    const db = h.container.db;
    const id = await enqueueUnchecked(db, {
      kind: "t.flaky",
      payload: {},
      priority: PRIORITY.webhook,
      maxAttempts: 2,
    }, h.clock.now());

    const [a1] = await claimDue(h);
    const t1 = h.clock.now();
    assert.equal(
      await fail(db, a1!, { error: "boom 1", retryable: true, now: t1 }),
      "retryable",
    );
    const r1 = await row(h, id);
    assert.equal(r1.state, "retryable");
    const waitMs = Date.parse(r1.run_at) - t1.getTime();
    assert.ok(waitMs >= 1_600 && waitMs <= 2_400, `backoff was ${waitMs} ms`);
    assert.deepEqual(await claimDue(h), []);

    clockOf(h).advance(waitMs);
    const [a2] = await claimDue(h);
    assert.equal(a2!.attempt, 2);
    const t2 = h.clock.now();
    assert.equal(
      await fail(db, a2!, { error: "boom 2", retryable: true, now: t2 }),
      "discarded",
    );
    const r2 = await row(h, id);
    assert.equal(r2.state, "discarded");
    assert.equal(r2.finalized_at, t2.toISOString());
    assert.equal(r2.lease_token, null);
    assert.deepEqual(JSON.parse(r2.errors), [
      { at: t1.toISOString(), attempt: 1, error: "boom 1" },
      { at: t2.toISOString(), attempt: 2, error: "boom 2" },
    ]);
  },
);

engineTest(
  "fail() discards a permanent error at once and honours retryAt",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    const a = await enqueueUnchecked(db, {
      kind: "t.a",
      payload: {},
      priority: 0,
    }, now);
    const b = await enqueueUnchecked(db, {
      kind: "t.b",
      payload: {},
      priority: 1,
    }, now);
    const [ja, jb] = await claimDue(h);
    assert.equal(
      await fail(db, ja!, { error: "bad input", retryable: false, now }),
      "discarded",
    );
    assert.equal((await row(h, a)).state, "discarded");
    const retryAt = addMs(now, 42_000);
    assert.equal(
      await fail(db, jb!, { error: "429", retryable: true, retryAt, now }),
      "retryable",
    );
    assert.equal((await row(h, b)).run_at, retryAt.toISOString());
  },
);

engineTest(
  "release() gives a job back without counting the attempt",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    const id = await enqueueUnchecked(
      db,
      { kind: "t.r", payload: {}, priority: 0 },
      now,
    );
    const [job] = await claimDue(h);
    const runAt = addMs(now, 5_000);
    assert.equal(await release(db, job!, { runAt, now }), true);
    const r = await row(h, id);
    assert.equal(r.state, "available");
    assert.equal(r.attempt, 0);
    assert.equal(r.run_at, runAt.toISOString());
    assert.equal(r.errors, "[]");
    assert.equal(await release(db, job!, { runAt, now }), false);
    assert.equal(await complete(db, job!, now), false);

    clockOf(h).advance(5_000);
    const [again] = await claimDue(h);
    assert.equal(again!.attempt, 1);
    const later = h.clock.now();
    await release(db, again!, { runAt: later, now: later, note: "Shutdown" });
    assert.deepEqual(JSON.parse((await row(h, id)).errors), [
      { at: later.toISOString(), attempt: 1, error: "Shutdown" },
    ]);
  },
);

engineTest(
  "pruneFinished() deletes only jobs finalized before the cutoff",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(db, [
      { kind: "t.p", payload: {}, priority: 0 },
      { kind: "t.p", payload: {}, priority: 0 },
      { kind: "t.p", payload: {}, priority: 0 },
    ], now);
    const [done, dropped] = await claimDue(h, 2);
    await complete(db, done!, now);
    await fail(db, dropped!, { error: "x", retryable: false, now });
    clockOf(h).advance(1_000);
    assert.equal(await pruneFinished(db, now), 0);
    assert.equal(await pruneFinished(db, addMs(now, 1)), 2);
    assert.deepEqual(await countByState(db), {
      available: 1,
      running: 0,
      retryable: 0,
      completed: 0,
      discarded: 0,
    });
  },
);

engineTest(
  "pruneFinished() walks past any number of old unfinished jobs and deletes every old finished one",
  async (h) => {
    const db = h.container.db;
    const start = h.clock.now();
    // 2,500 old jobs (more than one prune step), every other one finished.
    await enqueueManyUnchecked(
      db,
      Array.from({ length: 2_500 }, (_, i) => ({
        kind: "t.p",
        payload: { i },
        priority: 0,
      })),
      start,
    );
    const claimed = await claimDue(h, 2_500);
    const [done, dropped] = [claimed.slice(0, 1_000), claimed.slice(1_000)];
    await completeMany(db, done, start);
    await failMany(
      db,
      dropped.slice(0, 250).map((job) => ({
        job,
        error: "x",
        retryable: false,
      })),
      start,
    );
    // The rest: 1,250 still running, lease or not. A younger finished job stays.
    clockOf(h).advance(10_000);
    const young = await enqueueUnchecked(db, {
      kind: "t.p",
      payload: {},
      priority: 0,
    }, h.clock.now());
    const [youngJob] = await claimDue(h, 1);
    assert.equal(youngJob!.id, young);
    await complete(db, youngJob!, h.clock.now());
    assert.equal(await pruneFinished(db, addMs(start, 1)), 1_250);
    const counts = await countByState(db);
    assert.equal(counts.running, 1_250);
    assert.equal(counts.completed, 1, "the younger job is kept");
    assert.equal(counts.discarded, 0);
    assert.equal(await pruneFinished(db, addMs(start, 1)), 0);
  },
);

Deno.test("pruneFinished() reads the primary key range of old jobs, no index of finished ones", async () => {
  await using h = await createHarness();
  const now = h.clock.now();
  await enqueueManyUnchecked(h.container.db, [
    { kind: "t.p", payload: {}, priority: 0 },
  ], now);
  await complete(h.container.db, (await claimDue(h, 1))[0]!, now);
  await using probe = planProbe(`${h.dir}/app.db`);
  const plans = await probe.plansOf((db) => pruneFinished(db, addMs(now, 1)));
  assert.ok(plans.length >= 2, plans.join("\n---\n"));
  assert.match(
    plans[0]!,
    /SEARCH jobs USING INDEX sqlite_autoindex_jobs_1 \(id>\? AND id<\?\)/,
  );
  for (const plan of plans) assert.doesNotMatch(plan, /SCAN jobs\b(?! USING)/);
});

Deno.test("claim() finds due jobs through the partial claim index", async () => {
  await using h = await createHarness();
  await enqueueUnchecked(h.container.db, {
    kind: "t.a",
    payload: {},
    priority: PRIORITY.live,
  }, h.clock.now());
  await using probe = planProbe(`${h.dir}/app.db`);
  for (const maxPriority of [undefined, PRIORITY.inbound]) {
    const plans = await probe.plansOf((db) =>
      claim(
        db,
        claimOptions(h, maxPriority === undefined ? {} : { maxPriority }),
      )
    );
    // The first round reads, then claims the job; the second finds nothing due.
    assert.equal(plans.length, maxPriority === undefined ? 2 : 1);
    for (const plan of plans) {
      assert.match(plan, /USING INDEX jobs_claim_idx/);
      assert.doesNotMatch(plan, /TEMP B-TREE/);
    }
  }
});

engineTest(
  "claim() with reserved slots fills them only with urgent jobs, and with as many as are due",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    const batch = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        kind: "t.b",
        payload: { i },
        priority: PRIORITY.batch,
      }));
    const live = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        kind: "t.l",
        payload: { i },
        priority: PRIORITY.live,
      }));
    const reserved = (limit: number) =>
      claim(db, {
        workerId: "w",
        limit,
        leaseMs: LEASE_MS,
        now,
        reserve: { slots: 2, maxPriority: PRIORITY.inbound },
      });
    await enqueueManyUnchecked(db, batch(10), now);
    // Only batch work: the 2 reserved slots stay free.
    assert.deepEqual((await reserved(5)).map((j) => j.kind), [
      "t.b",
      "t.b",
      "t.b",
    ]);
    // One live job: it takes a reserved slot, the other stays free.
    await enqueueManyUnchecked(db, live(1), now);
    assert.deepEqual((await reserved(5)).map((j) => j.kind), [
      "t.l",
      "t.b",
      "t.b",
    ]);
    // More live jobs than slots: all slots, most urgent first.
    await enqueueManyUnchecked(db, live(7), now);
    assert.deepEqual((await reserved(5)).map((j) => j.kind), [
      "t.l",
      "t.l",
      "t.l",
      "t.l",
      "t.l",
    ]);
  },
);

Deno.test("claim() with reserved slots reads the claim index without a sort", async () => {
  await using h = await createHarness();
  await enqueueManyUnchecked(
    h.container.db,
    Array.from({ length: 20 }, (_, i) => ({
      kind: "t.a",
      payload: { i },
      priority: i % 2 === 0 ? PRIORITY.live : PRIORITY.batch,
    })),
    h.clock.now(),
  );
  await using probe = planProbe(`${h.dir}/app.db`);
  const plans = await probe.plansOf((db) =>
    claim(
      db,
      claimOptions(h, {
        probe: false,
        reserve: { slots: 1, maxPriority: PRIORITY.inbound },
      }),
    )
  );
  assert.equal(plans.length, 1);
  assert.match(plans[0]!, /SCAN jobs USING INDEX jobs_claim_idx/);
  assert.match(
    plans[0]!,
    /SEARCH jobs USING INDEX jobs_claim_idx \(priority<\?\)/,
  );
  assert.doesNotMatch(plans[0]!, /TEMP B-TREE|SCAN jobs\b(?! USING)/);
});

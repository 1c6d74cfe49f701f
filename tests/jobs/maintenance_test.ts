import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import { addMs, toDbTime } from "../../src/db/time.ts";
import { createLogger } from "../../src/log.ts";
import {
  claim,
  complete,
  countByState,
  enqueueManyUnchecked,
  enqueueUnchecked,
  PRIORITY,
} from "../../src/jobs/queue.ts";
import { RETENTION_MS } from "../../src/jobs/maintenance.ts";
import { createJobHandlers } from "../../src/jobs/registry.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";

/** The registry's handlers of the housekeeping kinds. */
function maintenanceHandlers(h: Harness) {
  const all = createJobHandlers(h.container);
  return { "jobs.rescue": all["jobs.rescue"], "jobs.prune": all["jobs.prune"] };
}

const DAY = 24 * 60 * 60 * 1_000;

function maintenancePool(h: Harness): WorkerPool {
  return new WorkerPool({
    db: h.container.db,
    clock: h.clock,
    log: createLogger("silent"),
    handlers: maintenanceHandlers(h),
    concurrency: 1,
  });
}

async function runMaintenance(h: Harness, kind: string): Promise<void> {
  await enqueueUnchecked(h.container.db, {
    kind,
    payload: {},
    priority: PRIORITY.maintenance,
  }, h.clock.now());
  assert.equal(await maintenancePool(h).runOnce({ maxJobs: 1 }), 1);
}

engineTest("jobs.rescue hands back jobs whose lease expired", async (h) => {
  const db = h.container.db;
  await enqueueUnchecked(
    db,
    { kind: "t.x", payload: {}, priority: 0 },
    h.clock.now(),
  );
  await claim(db, {
    workerId: "dead",
    limit: 1,
    leaseMs: 1_000,
    now: h.clock.now(),
  });
  (h.clock as ManualClock).advance(1_001);
  await runMaintenance(h, "jobs.rescue");
  const counts = await countByState(db);
  assert.equal(counts.running, 0);
  assert.equal(counts.retryable, 1);
});

engineTest(
  "jobs.prune deletes rows past retention and keeps the rest",
  async (h) => {
    const db = h.container.db;
    const clock = h.clock as ManualClock;
    const start = clock.now();
    const accountId = h.tenant.account.id;
    await enqueueManyUnchecked(db, [
      { kind: "t.old", payload: {}, priority: 0 },
      { kind: "t.old", payload: {}, priority: 0 },
    ], start);
    const [old] = await claim(db, {
      workerId: "w",
      limit: 1,
      leaseMs: 1_000,
      now: start,
    });
    await complete(db, old!, start);
    await db.insertInto("inbound_payloads").values([
      {
        id: "p-old",
        body: "{}",
        received_at: toDbTime(start),
        processed_at: toDbTime(start),
        error: null,
      },
      {
        id: "p-pending",
        body: "{}",
        received_at: toDbTime(start),
        processed_at: null,
        error: null,
      },
    ]).execute();

    clock.advance(RETENTION_MS + 1);
    const now = clock.now();
    const [recent] = await claim(db, {
      workerId: "w",
      limit: 1,
      leaseMs: 1_000,
      now,
    });
    await complete(db, recent!, now);
    const key = (k: string, expiresAt: Date) => ({
      account_id: accountId,
      key: k,
      route: "POST /messages",
      request_hash: "h",
      response_status: 202,
      response_body: "{}",
      created_at: toDbTime(addMs(expiresAt, -DAY)),
      expires_at: toDbTime(expiresAt),
    });
    await db.insertInto("idempotency_keys").values([
      key("expired", addMs(now, -1)),
      key("live", addMs(now, DAY)),
    ]).execute();
    await db.insertInto("inbound_payloads").values({
      id: "p-new",
      body: "{}",
      received_at: toDbTime(now),
      processed_at: toDbTime(now),
      error: null,
    }).execute();

    await runMaintenance(h, "jobs.prune");

    const jobs = await db.selectFrom("jobs").select("id").execute();
    const ids = new Set(jobs.map((j) => j.id));
    assert.equal(ids.has(old!.id), false, "the old completed job is pruned");
    assert.equal(ids.has(recent!.id), true, "the recent one is kept");
    const keys = await db.selectFrom("idempotency_keys").select("key")
      .execute();
    assert.deepEqual(keys.map((k) => k.key), ["live"]);
    const payloads = await db.selectFrom("inbound_payloads").select("id")
      .orderBy("id").execute();
    assert.deepEqual(payloads.map((p) => p.id), ["p-new", "p-pending"]);
  },
);

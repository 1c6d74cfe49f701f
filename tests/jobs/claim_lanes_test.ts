// A claim over the pool's lanes that only wants urgent jobs (the reserved
// slots) reads the urgent lanes' ranges of jobs_claim_idx, never the due
// batch backlog: the planner reads every lane the statement lists and cannot
// drop one by the bound `priority <= ?`.
import assert from "node:assert/strict";
import { planProbe } from "../_support/plans.ts";
import { createHarness, engineTest } from "../_harness.ts";
import {
  claim,
  type ClaimOptions,
  enqueueManyUnchecked,
  PRIORITY,
} from "../../src/jobs/queue.ts";

const MAIN_LANES = [
  PRIORITY.live,
  PRIORITY.inbound,
  PRIORITY.media,
  PRIORITY.batch,
  PRIORITY.maintenance,
];

function jobs(n: number, kind: string, priority: number) {
  return Array.from({ length: n }, (_, i) => ({
    kind,
    payload: { i },
    priority,
  }));
}

function options(now: Date, extra: Partial<ClaimOptions>): ClaimOptions {
  return {
    workerId: "w",
    limit: 5,
    leaseMs: 30_000,
    now,
    lanes: MAIN_LANES,
    kinds: ["t.batch", "t.live"],
    ...extra,
  };
}

/** The lane lists (`priority in (...)`) of the parts of `sql` that look for urgent jobs only. */
function urgentLaneLists(sql: string, reserved: boolean): number[][] {
  // With reserved slots, only the count of urgent jobs is urgent-only.
  const part = reserved ? sql.slice(sql.indexOf("count(*)")) : sql;
  return [...part.matchAll(/priority in \(([^)]*)\)/g)].map((m) =>
    m[1]!.split(",").map(Number)
  );
}

Deno.test("an urgent claim over the lanes reads the urgent lanes' index ranges, not the due batch backlog", async () => {
  await using h = await createHarness();
  const db = h.container.db;
  const now = h.clock.now();
  await enqueueManyUnchecked(db, jobs(2_000, "t.batch", PRIORITY.batch), now);
  await enqueueManyUnchecked(db, jobs(1, "t.live", PRIORITY.live), now);
  await using probe = planProbe(`${h.dir}/app.db`);
  const covered = async (lanes: number[]) =>
    Number(
      (await probe.db.selectFrom("jobs")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("state", "in", ["available", "retryable"])
        .where("priority", "in", lanes)
        .where("run_at", "<=", now.toISOString())
        .executeTakeFirstOrThrow()).n,
    );
  const claims = {
    "urgent only": options(now, { maxPriority: PRIORITY.inbound }),
    "with reserved slots": options(now, {
      probe: false,
      reserve: { slots: 2, maxPriority: PRIORITY.inbound },
    }),
  };
  for (const [name, opts] of Object.entries(claims)) {
    // Claimed and rolled back, so each claim sees the same table.
    const sqls = await probe.db.transaction().execute(async (trx) => {
      const issued = await probe.statementsOf(() => claim(trx, opts));
      const sqls = issued.map((s) => s.sql);
      throw new Rollback(sqls);
    }).catch((err) => {
      if (err instanceof Rollback) return err.sqls;
      throw err;
    });
    for (const sql of sqls) {
      const lists = urgentLaneLists(sql, opts.reserve !== undefined);
      assert.ok(lists.length > 0, `${name}: ${sql}`);
      for (const lanes of lists) {
        assert.deepEqual(lanes, [PRIORITY.live, PRIORITY.inbound], name);
        // The ranges it reads hold the one live job, not 2,001 rows.
        assert.equal(await covered(lanes), 1, name);
      }
    }
  }
  // The same statements still read jobs_claim_idx without a sort or a scan.
  for (const opts of Object.values(claims)) {
    const plans = await probe.plansOf((pdb) => claim(pdb, opts));
    for (const plan of plans) {
      assert.match(plan, /jobs_claim_idx \(priority=\? AND run_at<\?\)/);
      assert.doesNotMatch(plan, /TEMP B-TREE|SCAN jobs\b(?! USING)/, plan);
    }
  }
});

class Rollback extends Error {
  constructor(readonly sqls: string[]) {
    super("rollback");
  }
}

engineTest(
  "a claim over lanes takes only jobs as urgent as asked, and none without a lane that urgent",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(db, [
      ...jobs(10, "t.batch", PRIORITY.batch),
      ...jobs(2, "t.live", PRIORITY.live),
    ], now);
    // Urgent only: the two live jobs, no batch job for the third slot.
    const urgent = await claim(
      db,
      options(now, { limit: 3, maxPriority: PRIORITY.inbound }),
    );
    assert.deepEqual(urgent.map((j) => j.kind), ["t.live", "t.live"]);
    // No lane of the pool is that urgent: nothing, the batch jobs stay.
    assert.deepEqual(
      await claim(
        db,
        options(now, {
          lanes: [PRIORITY.batch],
          maxPriority: PRIORITY.inbound,
        }),
      ),
      [],
    );
    // Reserved slots of a pool without an urgent lane stay free.
    const reserved = await claim(
      db,
      options(now, {
        lanes: [PRIORITY.media, PRIORITY.batch],
        reserve: { slots: 2, maxPriority: PRIORITY.inbound },
      }),
    );
    assert.deepEqual(reserved.map((j) => j.kind), [
      "t.batch",
      "t.batch",
      "t.batch",
    ]);
    // With urgent lanes, a reserved slot still takes an urgent job first.
    await enqueueManyUnchecked(db, jobs(1, "t.live", PRIORITY.live), now);
    const mixed = await claim(
      db,
      options(now, { reserve: { slots: 2, maxPriority: PRIORITY.inbound } }),
    );
    assert.deepEqual(mixed.map((j) => j.kind), [
      "t.live",
      "t.batch",
      "t.batch",
    ]);
    const left = await db.selectFrom("jobs").select("kind")
      .where("state", "=", "available").execute();
    assert.deepEqual(left.map((j) => j.kind), Array(5).fill("t.batch"));
  },
);

// A claim with a per-group cap (the webhook pool) reads each group with room
// through jobs_group_idx and never the backlog of a full group.
import assert from "node:assert/strict";
import { planProbe } from "../_support/plans.ts";
import { createHarness, engineTest } from "../_harness.ts";
import { createLogger } from "../../src/log.ts";
import {
  claim,
  type ClaimOptions,
  enqueueManyUnchecked,
  PRIORITY,
  WEBHOOK_LANES,
} from "../../src/jobs/queue.ts";
import { nextAfter } from "../../src/jobs/queue_groups.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";

const LEASE_MS = 30_000;
const LANES = WEBHOOK_LANES;

function jobs(
  n: number,
  groupKey?: string,
  priority: number = PRIORITY.webhook,
) {
  return Array.from({ length: n }, (_, i) => ({
    kind: "t.w",
    payload: { i },
    priority,
    ...(groupKey === undefined ? {} : { groupKey }),
  }));
}

function capped(
  now: Date,
  limit: number,
  groups: ClaimOptions["groups"],
): ClaimOptions {
  return { workerId: "w", limit, leaseMs: LEASE_MS, now, lanes: LANES, groups };
}

Deno.test("a capped claim seeks each group with room and never reads the backlog of the full ones", async () => {
  await using h = await createHarness();
  const db = h.container.db;
  const now = h.clock.now();
  await enqueueManyUnchecked(db, [
    ...jobs(2_500, "a"),
    ...jobs(2_500, "b"),
    ...jobs(1, "c"),
  ], now);
  await using probe = planProbe(`${h.dir}/app.db`);
  const running = new Map([["a", 4], ["b", 4]]);
  let claimed: { groupKey: string | null }[] = [];
  const plans = await probe.plansOf(async (pdb) =>
    claimed = await claim(pdb, capped(now, 10, { cap: 4, running }))
  );
  assert.deepEqual(claimed.map((j) => j.groupKey), ["c"]);
  // One read (the group keys, whether each is due, whether jobs without a
  // group are: none are), then c's claim, which does not ask again.
  assert.equal(plans.length, 2, plans.join("\n---\n"));
  const [read, claimC] = plans;
  assert.match(
    read!,
    /SEARCH jobs USING INDEX jobs_group_idx \(group_key>\?\)/,
  );
  assert.match(
    read!,
    /SEARCH jobs USING INDEX jobs_group_idx \(group_key=\? AND priority=\? AND run_at<\?\)/,
  );
  assert.match(
    read!,
    /SEARCH jobs USING INDEX jobs_ungrouped_idx \(priority=\? AND run_at<\?\)/,
  );
  assert.match(
    claimC!,
    /USING INDEX jobs_group_idx \(group_key=\? AND priority=\? AND run_at<\?\)/,
  );
  for (const plan of plans) {
    assert.doesNotMatch(plan, /SCAN jobs|jobs_claim_idx|TEMP B-TREE/, plan);
  }
  // With every group full, the claim is that one read, whatever the backlog.
  running.set("c", 4);
  const idle = await probe.plansOf((pdb) =>
    claim(pdb, capped(now, 10, { cap: 4, running }))
  );
  assert.equal(idle.length, 1, idle.join("\n---\n"));
});

Deno.test("a capped claim issues no claiming update for a group whose jobs are all due later", async () => {
  await using h = await createHarness();
  const db = h.container.db;
  const now = h.clock.now();
  const later = new Date(now.getTime() + 30_000);
  await enqueueManyUnchecked(db, jobs(50, "parked"), later);
  await enqueueManyUnchecked(db, jobs(3, "due"), now);
  await using probe = planProbe(`${h.dir}/app.db`);
  let claimed: { groupKey: string | null }[] = [];
  const issued = await probe.statementsOf(async (pdb) =>
    claimed = await claim(pdb, capped(now, 10, { cap: 4, running: new Map() }))
  );
  assert.deepEqual(claimed.map((j) => j.groupKey), ["due", "due", "due"]);
  const updates = issued.filter((s) => /\bupdate jobs\b/.test(s.sql));
  assert.equal(updates.length, 1, "only the due group is claimed");
  assert.deepEqual(updates[0]!.parameters.slice(-1), ["due"]);
  // Nothing due anywhere: the read alone.
  const idle = await probe.statementsOf((pdb) =>
    claim(pdb, capped(now, 10, { cap: 4, running: new Map([["due", 4]]) }))
  );
  assert.equal(idle.length, 1, idle.map((s) => s.sql).join("\n---\n"));
});

engineTest(
  "a capped claim takes a third group while two are full, none past its cap, most urgent first within a group",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(db, [
      ...jobs(20, "a"),
      ...jobs(20, "b"),
      ...jobs(5, "c"),
      ...jobs(1, "c", PRIORITY.webhookManual),
      ...jobs(2),
    ], now);
    const running = new Map([["a", 3], ["b", 3], ["c", 1]]);
    const claimed = await claim(db, capped(now, 10, { cap: 3, running }));
    const of = (g: string | null) => claimed.filter((j) => j.groupKey === g);
    assert.equal(of("a").length + of("b").length, 0, "a and b are full");
    assert.deepEqual(
      of("c").map((j) => j.priority),
      [PRIORITY.webhookManual, PRIORITY.webhook],
      "c had room for 2: the manual redelivery first",
    );
    assert.equal(of(null).length, 2, "jobs without a group are not capped");
    assert.equal(claimed.length, 4);
  },
);

engineTest(
  "capped claims with fewer slots than the groups' room take each group in turn",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(db, [
      ...jobs(5, "a"),
      ...jobs(5, "b"),
      ...jobs(5, "c"),
    ], now);
    let after: string | null | undefined;
    const order: (string | null)[] = [];
    for (let i = 0; i < 6; i++) {
      const claimed = await claim(
        db,
        capped(now, 1, { cap: 5, running: new Map(), after }),
      );
      assert.equal(claimed.length, 1);
      order.push(claimed[0]!.groupKey);
      after = nextAfter(after, claimed);
    }
    assert.deepEqual(order, ["a", "b", "c", "a", "b", "c"]);
  },
);

engineTest(
  "a pool with maxPerGroup and one slot runs the groups in turn",
  async (h) => {
    const db = h.container.db;
    await enqueueManyUnchecked(db, [
      ...jobs(3, "a"),
      ...jobs(3, "b"),
      ...jobs(3, "c"),
    ], h.clock.now());
    const ran: string[] = [];
    const pool = new WorkerPool({
      db,
      clock: h.clock,
      log: createLogger("silent"),
      handlers: {
        "t.w": (_payload, ctx) => {
          ran.push(ctx.job.groupKey!);
          return Promise.resolve();
        },
      },
      concurrency: 1,
      maxPerGroup: 2,
      lanes: LANES,
    });
    assert.equal(await pool.runOnce({ maxJobs: 6 }), 6);
    assert.deepEqual(ran, ["a", "b", "c", "a", "b", "c"]);
  },
);

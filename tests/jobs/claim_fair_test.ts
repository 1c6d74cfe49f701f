// A capped claim over groups owned by accounts (a webhook subscription's key
// is `<accountId>/<webhookId>`): no account past ownerCap, the free slots
// dealt round-robin by account, then by subscription, and an account at its
// cap stepped over in the claim's read, not walked.
import assert from "node:assert/strict";
import type { KyselyPlugin } from "kysely";
import { planProbe } from "../_support/plans.ts";
import { createHarness, engineTest } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import {
  claim,
  type ClaimOptions,
  complete,
  enqueueManyUnchecked,
  type JobRow,
  PRIORITY,
  WEBHOOK_LANES,
} from "../../src/jobs/queue.ts";
import { nextAfter } from "../../src/jobs/queue_groups.ts";

const LEASE_MS = 60_000;

function jobs(n: number, groupKey: string) {
  return Array.from({ length: n }, (_, i) => ({
    kind: "t.w",
    payload: { i },
    priority: PRIORITY.webhook,
    groupKey,
  }));
}

function capped(
  now: Date,
  limit: number,
  groups: ClaimOptions["groups"],
): ClaimOptions {
  return {
    workerId: "w",
    limit,
    leaseMs: LEASE_MS,
    now,
    lanes: WEBHOOK_LANES,
    groups,
  };
}

function countBy(claimed: JobRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const j of claimed) out[j.groupKey!] = (out[j.groupKey!] ?? 0) + 1;
  return out;
}

engineTest(
  "a capped claim deals its slots round-robin by account, then by subscription",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    await enqueueManyUnchecked(db, [
      ...jobs(10, "a/1"),
      ...jobs(10, "a/2"),
      ...jobs(10, "a/3"),
      ...jobs(10, "b/1"),
      ...jobs(10, "c/1"),
      ...jobs(10, "c/2"),
    ], now);
    const claimed = await claim(
      db,
      capped(now, 6, { cap: 16, ownerCap: 16, running: new Map() }),
    );
    assert.deepEqual(countBy(claimed), {
      "a/1": 1,
      "a/2": 1,
      "b/1": 2,
      "c/1": 1,
      "c/2": 1,
    }, "rounds a/1 b/1 c/1, a/2 b/1 c/2: two slots per account");
  },
);

engineTest(
  "a capped claim gives an account no more than ownerCap running, however many subscriptions it has",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    const slow = Array.from({ length: 12 }, (_, i) => `slow/${i + 10}`);
    await enqueueManyUnchecked(db, [
      ...slow.flatMap((g) => jobs(30, g)),
      ...jobs(3, "other/1"),
    ], now);
    const running = new Map([["slow/10", 1], ["slow/11", 1]]);
    const claimed = await claim(
      db,
      capped(now, 64, { cap: 16, ownerCap: 4, running }),
    );
    const of = (owner: string) =>
      claimed.filter((j) => j.groupKey!.startsWith(`${owner}/`)).length;
    assert.equal(of("slow"), 2, "2 running of 4: 2 more");
    assert.equal(of("other"), 3, "the other account's jobs all claimed");
    // At its cap, the account gets nothing more.
    for (const j of claimed) {
      running.set(j.groupKey!, (running.get(j.groupKey!) ?? 0) + 1);
    }
    await enqueueManyUnchecked(db, jobs(2, "other/2"), now);
    const next = await claim(
      db,
      capped(now, 64, { cap: 16, ownerCap: 4, running }),
    );
    assert.deepEqual(
      countBy(next),
      { "other/2": 1 },
      "slow is full; other had 3 of its 4 running",
    );
  },
);

/** Records how many rows each claim read (the statement that lists the groups) returned. */
function readRows(): { plugin: KyselyPlugin; rows: number[] } {
  const rows: number[] = [];
  return {
    rows,
    plugin: {
      transformQuery: (args) => args.node,
      transformResult: (args) => {
        if (args.result.rows.length > 0 && "due" in args.result.rows[0]!) {
          rows.push(args.result.rows.length);
        }
        return Promise.resolve(args.result);
      },
    },
  };
}

Deno.test("a claim steps over an account at its cap with one seek, reading none of its subscriptions' backlogs", async () => {
  await using h = await createHarness();
  const db = h.container.db;
  const now = h.clock.now();
  const slow = Array.from({ length: 12 }, (_, i) => `slow/${i + 10}`);
  await enqueueManyUnchecked(db, [
    ...slow.flatMap((g) => jobs(200, g)),
    ...jobs(1, "other/1"),
  ], now);
  const running = new Map(slow.slice(0, 4).map((g) => [g, 1]));
  await using probe = planProbe(`${h.dir}/app.db`);
  const read = readRows();
  let claimed: JobRow[] = [];
  const plans = await probe.plansOf(async (pdb) =>
    claimed = await claim(
      pdb.withPlugin(read.plugin),
      capped(now, 10, { cap: 16, ownerCap: 4, running }),
    )
  );
  assert.deepEqual(claimed.map((j) => j.groupKey), ["other/1"]);
  assert.equal(plans.length, 2, "the read, then other/1's claim");
  // The read lists the full account's first subscription only (then steps
  // past the rest), the other account's, and the jobs without a group.
  assert.deepEqual(read.rows, [3]);
  assert.match(
    plans[0]!,
    /SEARCH jobs USING INDEX jobs_group_idx \(group_key>\?\)/,
  );
  for (const plan of plans) {
    assert.doesNotMatch(plan, /SCAN jobs|jobs_claim_idx|TEMP B-TREE/, plan);
  }
});

engineTest(
  "on the injected clock, twelve 9.5 s subscriptions of one account leave another account's attempts no wait",
  async (h) => {
    // The webhook pool's defaults: 64 slots, 16 per subscription, a quarter
    // of the slots per account. Each tick (100 ms of the manual clock) ends
    // the attempts due to end, then claims into the free slots, as the pool does.
    const db = h.container.db;
    const clock = h.clock as ManualClock;
    const start = clock.now().getTime();
    const slow = Array.from({ length: 12 }, (_, i) => `attacker/${i + 10}`);
    await enqueueManyUnchecked(
      db,
      slow.flatMap((g) => jobs(30, g)),
      clock.now(),
    );
    const running: { job: JobRow; endsAt: number }[] = [];
    const waits: number[] = [];
    let after: string | null | undefined;
    let peakAttacker = 0;
    for (let tick = 0; tick < 200; tick++) {
      const now = clock.now();
      if (tick % 5 === 0) {
        await enqueueManyUnchecked(db, jobs(1, "victim/1"), now);
      }
      for (const r of running.filter((r) => r.endsAt <= now.getTime())) {
        assert.equal(await complete(db, r.job, now), true);
        running.splice(running.indexOf(r), 1);
      }
      const counts = new Map<string, number>();
      for (const { job } of running) {
        counts.set(job.groupKey!, (counts.get(job.groupKey!) ?? 0) + 1);
      }
      const claimed = await claim(
        db,
        capped(now, 64 - running.length, {
          cap: 16,
          ownerCap: 16,
          running: counts,
          after,
        }),
      );
      after = nextAfter(after, claimed);
      for (const job of claimed) {
        const victim = job.groupKey === "victim/1";
        if (victim) waits.push(now.getTime() - Date.parse(job.runAt));
        running.push({
          job,
          endsAt: now.getTime() + (victim ? 100 : 9_500),
        });
      }
      peakAttacker = Math.max(
        peakAttacker,
        running.filter((r) => r.job.groupKey !== "victim/1").length,
      );
      clock.advance(100);
    }
    assert.equal(clock.now().getTime() - start, 20_000);
    assert.equal(waits.length, 40, "every victim attempt was claimed");
    assert.deepEqual(
      waits.filter((w) => w > 0),
      [],
      "each claimed on the tick its event was made",
    );
    assert.equal(peakAttacker, 16, "the attacker kept to its quarter");
  },
);

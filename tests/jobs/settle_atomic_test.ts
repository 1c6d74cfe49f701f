// Outcomes of several kinds settled together: on libSQL one write batch
// (Settler's `plans`), never an interactive transaction.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import {
  claim,
  enqueueManyUnchecked,
  type JobRow,
  PRIORITY,
  rescueExpiredLeases,
} from "../../src/jobs/queue.ts";
import { type Outcome, Settler } from "../../src/jobs/settle.ts";
import type { Logger } from "../../src/log.ts";

async function claimed(h: Harness, n: number): Promise<JobRow[]> {
  await enqueueManyUnchecked(
    h.container.db,
    Array.from({ length: n }, (_, i) => ({
      kind: "t.settle",
      payload: { i },
      priority: PRIORITY.live,
      maxAttempts: 3,
    })),
    h.clock.now(),
  );
  const jobs = await claim(h.container.db, {
    workerId: "w1",
    limit: n,
    leaseMs: 30_000,
    now: h.clock.now(),
  });
  assert.equal(jobs.length, n);
  // By payload order.
  return jobs.sort((a, b) =>
    (a.payload as { i: number }).i - (b.payload as { i: number }).i
  );
}

/** A logger that keeps the warnings and errors it is given, by job. */
function recording(): { log: (job: JobRow) => Logger; lines: string[] } {
  const lines: string[] = [];
  const log = (job: JobRow): Logger => {
    const keep = (msg: string, fields?: Record<string, unknown>) =>
      lines.push(
        `${(job.payload as { i: number }).i} ${msg} ${
          JSON.stringify(fields ?? {})
        }`,
      );
    const logger: Logger = {
      debug: () => {},
      info: () => {},
      warn: keep,
      error: keep,
      child: () => logger,
    };
    return logger;
  };
  return { log, lines };
}

engineTest(
  "a complete, a fail and a snooze that end together settle in one write (libSQL: one batch, no transaction), a lost lease and a stale rowid hint included",
  async (h) => {
    if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
    const jobs = await claimed(h, 5);
    // Job 1's lease is lost: it expires and is rescued.
    await h.container.db.updateTable("jobs")
      .set({ locked_until: "2000-01-01T00:00:00.000Z" })
      .where("id", "=", jobs[1]!.id).execute();
    assert.equal(await rescueExpiredLeases(h.container.db, h.clock.now()), 1);
    // Job 2's rowid hint no longer holds it (a VACUUM renumbered rows).
    jobs[2] = { ...jobs[2]!, rowid: 987_654_321 };
    const settler = new Settler({
      db: h.container.db,
      clock: h.clock,
      plans: h.engine === "libsql" ? h.container.commits : undefined,
    });
    const { log, lines } = recording();
    const outcomes: Outcome[] = [
      { type: "complete" },
      { type: "complete" },
      { type: "complete" },
      { type: "fail", error: "no", retryable: false },
      { type: "snooze", delayMs: 1_000 },
    ];
    const before = { ...h.container.commits.batchStats };
    // One turn: one flush.
    await Promise.all(
      jobs.map((job, i) => settler.settle(job, outcomes[i]!, log(job))),
    );
    const rows = await h.container.db.selectFrom("jobs")
      .select(["id", "state"]).where("kind", "=", "t.settle").execute();
    assert.deepEqual(
      jobs.map((j) => rows.find((r) => r.id === j.id)!.state),
      ["completed", "retryable", "completed", "discarded", "available"],
    );
    assert.deepEqual(lines.sort(), [
      "1 Job finished after its lease was lost {}",
      '3 Job failed for good {"error":"no","state":"discarded"}',
    ]);
    const after = h.container.commits.batchStats;
    if (after) {
      assert.equal(after.batches - before.batches!, 1, "one write batch");
    }
  },
);

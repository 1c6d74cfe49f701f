import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { recordingQueries } from "../_support/recording.ts";
import {
  enqueueMany,
  enqueueManyCompiled,
  PRIORITY,
} from "../../src/jobs/queue.ts";
import type { EnqueueInput } from "../../src/jobs/types.ts";

function sends(ids: string[], runAt?: Date): EnqueueInput[] {
  return ids.map((messageId) => ({
    kind: "message.send",
    payload: { messageId },
    priority: PRIORITY.batch,
    uniqueKey: `message.send:${messageId}`,
    ...(runAt ? { runAt } : {}),
  }));
}

/** The job rows by unique key, without what each insert draws itself (id). */
async function rows(h: Harness) {
  const all = await h.container.db.selectFrom("jobs").selectAll()
    .orderBy("unique_key").execute();
  return all.map(({ id: _id, ...row }) => row);
}

engineTest(
  "enqueueManyCompiled writes the rows enqueueMany writes and skips taken unique keys",
  async (h) => {
    const now = h.clock.now();
    const later = new Date(now.getTime() + 5_000);
    const ids = Array.from({ length: 150 }, (_, i) => `m-${1000 + i}`);
    await enqueueMany(h.container.db, sends(ids, later), now);
    const built = await rows(h);
    await h.container.db.deleteFrom("jobs").execute();

    await enqueueManyCompiled(h.container.db, sends(ids, later), now);
    assert.deepEqual(await rows(h), built);
    assert.equal(built.length, 150);
    assert.equal(built[0]!.run_at, later.toISOString());

    // Again, with two new ones among them: only those go in.
    await enqueueManyCompiled(
      h.container.db,
      sends([...ids.slice(0, 20), "m-new-1", "m-new-2"]),
      now,
    );
    const after = await rows(h);
    assert.equal(after.length, 152);
    assert.deepEqual(
      after.filter((r) => r.unique_key?.includes("m-new")).map((r) => r.run_at),
      [now.toISOString(), now.toISOString()],
    );
  },
);

engineTest(
  "enqueueManyCompiled binds what a batch's send jobs share once: 4 values a job, not 17",
  async (h) => {
    const now = h.clock.now();
    const { db, queries } = recordingQueries(h.container.db);
    const ids = Array.from({ length: 100 }, (_, i) => `m-${2000 + i}`);
    // Paced as a batch is: every job its own run_at.
    const jobs = sends(ids).map((job, i) => ({
      ...job,
      runAt: new Date(now.getTime() + 12.5 * i),
    }));
    await enqueueManyCompiled(db, jobs, now);
    assert.equal(queries.length, 1);
    // id, payload, run_at and unique_key differ; the 13 other columns are
    // bound once (node:sqlite binds a string in about 150 ns).
    assert.equal(queries[0]!.parameters.length, 13 + 4 * 100);
    const stored = await rows(h);
    assert.equal(stored.length, 100);
    assert.deepEqual(
      stored.map((r) => r.run_at),
      jobs.map((j) => j.runAt.toISOString()),
    );
    assert.ok(stored.every((r) => r.priority === PRIORITY.batch));
  },
);

import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
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

import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import {
  enqueue,
  enqueueCompiled,
  type EnqueueInput,
  PRIORITY,
} from "../../src/jobs/queue.ts";

const job = (messageId: string): EnqueueInput => ({
  kind: "message.send",
  payload: { messageId },
  priority: PRIORITY.live,
  uniqueKey: `message.send:${messageId}`,
  maxAttempts: 12,
  runAt: new Date("2030-01-01T00:00:05.000Z"),
});

engineTest(
  "enqueueCompiled writes the row enqueue writes, and skips a unique key that exists",
  async (h) => {
    const db = h.container.db;
    const now = new Date("2030-01-01T00:00:00.000Z");
    await enqueue(db, job("m1"), now);
    await enqueueCompiled(db, job("m2"), now);
    await enqueueCompiled(db, { ...job("m2"), priority: PRIORITY.batch }, now);
    const rows = await db.selectFrom("jobs").selectAll()
      .where("kind", "=", "message.send").orderBy("unique_key").execute();
    assert.equal(rows.length, 2, "the second m2 is skipped by its unique key");
    const [viaEnqueue, viaCompiled] = rows.map(({ id: _id, ...r }) => r);
    assert.deepEqual(viaCompiled, {
      ...viaEnqueue,
      payload: JSON.stringify({ messageId: "m2" }),
      unique_key: "message.send:m2",
    });
    assert.equal(viaCompiled!.run_at, "2030-01-01T00:00:05.000Z");
  },
);

engineTest(
  "enqueueCompiled fills the kind's defaults like enqueue",
  async (h) => {
    const db = h.container.db;
    const now = new Date("2030-01-01T00:00:00.000Z");
    await enqueueCompiled(db, {
      kind: "message.send",
      payload: { messageId: "m3" },
    }, now);
    await enqueue(
      db,
      { kind: "message.send", payload: { messageId: "m4" } },
      now,
    );
    const rows = await db.selectFrom("jobs")
      .select(["priority", "max_attempts", "unique_key", "run_at", "state"])
      .where("kind", "=", "message.send").orderBy("unique_key").execute();
    assert.equal(rows.length, 2);
    assert.deepEqual(
      { ...rows[0], unique_key: null },
      { ...rows[1], unique_key: null },
    );
  },
);

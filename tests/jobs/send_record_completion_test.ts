// The record of an accepted send completes its job in the same transaction,
// so a send job's end costs no settling transaction of its own.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { queuedTemplate } from "../_support/queued_message.ts";
import { deliverMessage } from "../../src/domain/messages/delivery_service.ts";
import { acceptingUpstream } from "../_support/accepting_upstream.ts";
import { claim } from "../../src/jobs/queue.ts";
import type { JobRow } from "../../src/jobs/types.ts";

/** A queued message and its send job, claimed as a worker would. */
async function claimedSend(h: Harness): Promise<{ id: string; job: JobRow }> {
  const id = await queuedTemplate(h);
  const [job] = await claim(h.container.db, {
    workerId: "test",
    limit: 1,
    leaseMs: 60_000,
    now: h.container.clock.now(),
    kinds: ["message.send"],
  });
  assert.ok(job, "the send job was claimed");
  return { id, job };
}

async function rowsOf(h: Harness, id: string, jobId: string) {
  const message = await h.container.db.selectFrom("messages")
    .select(["status", "wa_message_id", "updated_at"]).where("id", "=", id)
    .executeTakeFirstOrThrow();
  const job = await h.container.db.selectFrom("jobs")
    .select(["state", "finalized_at"]).where("id", "=", jobId)
    .executeTakeFirstOrThrow();
  return { message, job };
}

engineTest(
  "an accepted send's record completes its job in its transaction and tells the runner once committed",
  async (h) => {
    const { id, job } = await claimedSend(h);
    const told: boolean[] = [];
    await deliverMessage(
      { ...h.container, graph: acceptingUpstream(() => "wamid.C1").graph },
      id,
      { lease: job, markCompleted: (done) => told.push(done) },
    );
    assert.deepEqual(told, [true]);
    const { message, job: ended } = await rowsOf(h, id, job.id);
    assert.equal(message.status, "sent");
    assert.equal(message.wa_message_id, "wamid.C1");
    // No runner settled it: the record's unit did, at the record's time.
    assert.equal(ended.state, "completed");
    assert.equal(ended.finalized_at, message.updated_at);
  },
);

engineTest(
  "a send whose lease was lost is still recorded, and its runner is told the job was not completed",
  async (h) => {
    const { id, job } = await claimedSend(h);
    const told: boolean[] = [];
    await deliverMessage(
      { ...h.container, graph: acceptingUpstream(() => "wamid.C2").graph },
      id,
      {
        lease: { ...job, leaseToken: "not-this-one" },
        markCompleted: (done) => told.push(done),
      },
    );
    assert.deepEqual(told, [false]);
    const { message, job: left } = await rowsOf(h, id, job.id);
    assert.equal(message.status, "sent");
    assert.equal(message.wa_message_id, "wamid.C2");
    assert.equal(left.state, "running", "the lease holder still owns it");
  },
);

// A shutdown never cuts a send off in the middle: a send job still waiting
// for its number's turn when the pool starts draining gives its job back
// without calling upstream (and is sent once after the restart), where it
// used to go on waiting, call upstream late in the drain, and have that call
// aborted when the drain timed out: after Meta had accepted it, a second
// send after the restart.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import type { Container } from "../../src/container.ts";
import { queuedTemplate } from "../_support/queued_message.ts";
import { acceptingUpstream } from "../_support/accepting_upstream.ts";
import { createJobHandlers } from "../../src/jobs/registry.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";
import { PRIORITY } from "../../src/jobs/kinds.ts";
import { systemClock } from "../../src/clock.ts";
import { createLogger } from "../../src/log.ts";
import { SendGovernor } from "../../src/upstream/send_governor.ts";
import { deliverMessage } from "../../src/domain/messages/delivery_service.ts";
import { RetryLater } from "../../src/errors.ts";
import type { GraphApi } from "../../src/upstream/graph_api.ts";

/** A governor whose number never gets a turn: each send waits until its signal aborts. */
class ClosedGovernor extends SendGovernor {
  waiting = 0;
  constructor() {
    super({ defaultRatePerSecond: 1_000 });
  }
  override acquire(
    _channelId: string,
    opts: { signal?: AbortSignal },
  ): Promise<void> {
    this.waiting++;
    return new Promise((_resolve, reject) => {
      opts.signal?.addEventListener("abort", () => {
        this.waiting--;
        reject(opts.signal!.reason);
      }, { once: true });
    });
  }
}

/** The main pool's send lanes over the harness's database, its handlers on `deps`. */
function sendPool(h: Harness, deps: Partial<Container>): WorkerPool {
  return new WorkerPool({
    db: h.container.db,
    clock: systemClock,
    log: createLogger("silent"),
    handlers: createJobHandlers({ ...h.container, ...deps }),
    lanes: [PRIORITY.live, PRIORITY.batch],
    concurrency: 2,
    pollMs: 10,
  });
}

engineTest(
  "a send waiting for its turn when the pool drains gives its job back unsent, attempt unspent, and is sent once after the restart",
  async (h) => {
    const { graph, calls } = acceptingUpstream();
    const id = await queuedTemplate(h);
    const governor = new ClosedGovernor();
    const pool = (deps: Partial<Container>) => sendPool(h, { graph, ...deps });
    const first = pool({ governor });
    first.start();
    const deadline = Date.now() + 5_000;
    while (governor.waiting === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.equal(governor.waiting, 1, "the send waits for its turn");

    // A long drain: before, the send waited it out and was cut off at its end.
    assert.equal(await first.drain(60_000), true, "drained without a timeout");
    assert.equal(calls.length, 0, "nothing went upstream");
    const job = await h.container.db.selectFrom("jobs")
      .select(["state", "attempt", "run_at"])
      .where("kind", "=", "message.send").executeTakeFirstOrThrow();
    assert.equal(job.state, "available", "given back, not failed");
    const status = async () =>
      (await h.container.db.selectFrom("messages").select("status")
        .where("id", "=", id).executeTakeFirstOrThrow()).status;
    assert.equal(await status(), "queued");

    const restarted = pool({});
    assert.equal(await restarted.runOnce(), 1);
    await restarted.drain(5_000);
    assert.equal(calls.length, 1, "sent once, after the restart");
    assert.equal(await status(), "sent");
    const done = await h.container.db.selectFrom("jobs")
      .select(["state", "attempt"])
      .where("kind", "=", "message.send").executeTakeFirstOrThrow();
    assert.equal(done.state, "completed");
    assert.equal(done.attempt, 1, "the give-back counted no attempt");
  },
);

engineTest(
  "a send whose turn comes after shutdown began does not call upstream, and its message stays queued",
  async (h) => {
    const { graph, calls } = acceptingUpstream();
    const id = await queuedTemplate(h);
    const stopping = new AbortController();
    /** Grants the turn, but only once shutdown has begun. */
    class LateGovernor extends SendGovernor {
      constructor() {
        super({ defaultRatePerSecond: 1_000 });
      }
      override acquire(): Promise<void> {
        stopping.abort(new Error("Worker pool is shutting down"));
        return Promise.resolve();
      }
    }
    await assert.rejects(
      deliverMessage(
        { ...h.container, graph, governor: new LateGovernor() },
        id,
        { stopping: stopping.signal },
      ),
      RetryLater,
    );
    assert.equal(calls.length, 0, "nothing went upstream");
    const row = await h.container.db.selectFrom("messages").select("status")
      .where("id", "=", id).executeTakeFirstOrThrow();
    assert.equal(row.status, "queued");
  },
);

engineTest(
  "a send whose upstream call is under way when the pool drains runs to its end and is recorded",
  async (h) => {
    const accepting = acceptingUpstream();
    let answer!: () => void;
    const answered = new Promise<void>((r) => answer = r);
    let called!: () => void;
    const inFlight = new Promise<void>((r) => called = r);
    const graph: GraphApi = {
      ...accepting.graph,
      sendMessage: async (...args) => {
        called();
        await answered;
        return await accepting.graph.sendMessage(...args);
      },
    };
    const id = await queuedTemplate(h);
    const pool = sendPool(h, { graph });
    pool.start();
    await inFlight;
    const drained = pool.drain(60_000);
    await new Promise((r) => setTimeout(r, 20));
    answer();
    assert.equal(await drained, true);
    assert.equal(accepting.calls.length, 1);
    const row = await h.container.db.selectFrom("messages")
      .select(["status", "wa_message_id"]).where("id", "=", id)
      .executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { status: "sent", wa_message_id: "wamid.S1" });
    const job = await h.container.db.selectFrom("jobs").select("state")
      .where("kind", "=", "message.send").executeTakeFirstOrThrow();
    assert.equal(job.state, "completed");
  },
);

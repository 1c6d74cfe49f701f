import assert from "node:assert/strict";
import { createHarness, engineTest } from "../_harness.ts";
import { AppError } from "../../src/errors.ts";
import { JOB_KINDS } from "../../src/jobs/kinds.ts";
import { enqueue, enqueueMany } from "../../src/jobs/queue.ts";
import { z } from "zod";
import {
  createJobHandlers,
  isFinalFailure,
  jobHandler,
  UNLOADED_HANDLER_SNOOZE_MS,
} from "../../src/jobs/registry.ts";
import { ProgramParts } from "../../src/program_parts.ts";
import { Snooze } from "../../src/jobs/worker_pool.ts";
import { createLogger } from "../../src/log.ts";
import type { JobContext } from "../../src/jobs/worker_pool.ts";

engineTest(
  "enqueue() takes a kind from JOB_KINDS with its payload and fills in the kind's lane, attempts and key",
  async (h) => {
    const db = h.container.db;
    const now = h.clock.now();
    const id = await enqueue(db, {
      kind: "media.download",
      payload: { mediaId: "med_1" },
    }, now);
    const row = await db.selectFrom("jobs").selectAll()
      .where("id", "=", id!).executeTakeFirstOrThrow();
    assert.equal(row.priority, JOB_KINDS["media.download"].lane);
    assert.equal(row.max_attempts, 8);
    assert.equal(row.unique_key, "media.download:med_1");
    // The same payload again is the same job.
    assert.equal(
      await enqueue(db, {
        kind: "media.download",
        payload: { mediaId: "med_1" },
      }, now),
      null,
    );
    // A caller's own lane and attempts win (a batch send).
    await enqueueMany(db, [{
      kind: "message.send",
      payload: { messageId: "msg_1" },
      priority: 30,
      maxAttempts: 3,
    }], now);
    const send = await db.selectFrom("jobs").selectAll()
      .where("unique_key", "=", "message.send:msg_1")
      .executeTakeFirstOrThrow();
    assert.deepEqual([send.priority, send.max_attempts], [30, 3]);
  },
);

Deno.test("a misspelled kind or a wrong payload fails the type check, and a kind that slips through fails at enqueue", async () => {
  await using h = await createHarness();
  const db = h.container.db;
  const now = h.clock.now();
  await assert.rejects(
    // @ts-expect-error: "mesage.send" is not a job kind.
    enqueue(db, { kind: "mesage.send", payload: { messageId: "m" } }, now),
    /unknown kind "mesage\.send"/,
  );
  // Type-level only (never run): a payload of another kind does not compile.
  void (() =>
    enqueueMany(db, [
      // @ts-expect-error: message.send takes { messageId }.
      { kind: "message.send", payload: { mediaId: "m" } },
    ], now));
  const count = await db.selectFrom("jobs").select((eb) =>
    eb.fn.countAll<number>().as("n")
  ).executeTakeFirstOrThrow();
  assert.equal(Number(count.n), 0);
});

Deno.test("every kind in JOB_KINDS has a handler, and the handlers parse their payload", async () => {
  await using h = await createHarness();
  const handlers = createJobHandlers(h.container);
  assert.deepEqual(Object.keys(handlers).sort(), Object.keys(JOB_KINDS).sort());
  await assert.rejects(
    handlers["message.send"]({ message: "x" }, contextOf(1, 3)),
    (err) =>
      err instanceof AppError && err.code === "VALIDATION_ERROR" &&
      /malformed payload/.test(err.message),
  );
});

function contextOf(attempt: number, maxAttempts: number, aborted = false) {
  const controller = new AbortController();
  if (aborted) controller.abort();
  return {
    job: {
      id: "job_1",
      kind: "message.send",
      priority: 0,
      payload: {},
      attempt,
      maxAttempts,
      runAt: "",
      leaseToken: "t",
      uniqueKey: null,
      groupKey: null,
      errors: [],
    },
    signal: controller.signal,
    stopping: new AbortController().signal,
    log: createLogger("silent"),
    completeIn: () => Promise.resolve(false),
    markCompleted: () => {},
  } satisfies JobContext;
}

Deno.test("isFinalFailure() is true for a permanent error or the last attempt, never for a lost lease", () => {
  const transient = new Error("connection reset");
  const permanent = new AppError("VALIDATION_ERROR", "bad");
  assert.equal(isFinalFailure(transient, contextOf(1, 3)), false);
  assert.equal(isFinalFailure(transient, contextOf(3, 3)), true);
  // Past the last attempt: the extra run a rescued lease gets.
  assert.equal(isFinalFailure(transient, contextOf(4, 3)), true);
  assert.equal(isFinalFailure(permanent, contextOf(1, 3)), true);
  assert.equal(isFinalFailure(permanent, contextOf(3, 3, true)), false);
});

Deno.test("a handler that meets a missing part of the program gives its job back on the last attempt, without the final-failure hook", async () => {
  const parts = new ProgramParts(createLogger("silent"));
  // A real import that fails, as a chunk deleted under the server does.
  const gone = new URL("./no_such_module.ts", import.meta.url).href;
  const hooked: unknown[] = [];
  const handler = jobHandler("media.download", z.object({}), {
    run: () => parts.load("S3 media store", () => import(gone)),
    onFinalFailure: (_payload, err) => {
      hooked.push(err);
      return Promise.resolve();
    },
  });
  await assert.rejects(
    handler({}, contextOf(3, 3)),
    (err) =>
      err instanceof Snooze && err.delayMs === UNLOADED_HANDLER_SNOOZE_MS,
  );
  assert.equal(hooked.length, 0);
  assert.equal(parts.broken, true);
  // Any other error on the last attempt still ends the job through the hook.
  const failing = jobHandler("media.download", z.object({}), {
    run: () => Promise.reject(new Error("connection reset")),
    onFinalFailure: (_payload, err) => {
      hooked.push(err);
      return Promise.resolve();
    },
  });
  await failing({}, contextOf(3, 3));
  assert.equal(hooked.length, 1);
});

// The delivery paths open no interactive transaction on libSQL (issue 30):
// an attempt's record and its retry, the auto-disable and the skipped
// queue, a test and a replay, each written as one atomic unit (planned
// writes: one write batch on libSQL, the group transaction on SQLite).
// `forbidTransactions` makes db.transaction() throw on libSQL, so these fail
// on the old code there; on SQLite they pin that the same units keep their
// behaviour. Setup (subscriptions, contacts) runs before the switch: those
// are other paths.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { ENGINES } from "../_harness.ts";
import {
  createContact,
  type Json,
  nextPhone,
  type WebhookHarness,
  webhookTest,
} from "../_support/webhooks.ts";
import { claim } from "../../src/jobs/queue.ts";
import type { Plan } from "../../src/db/planned_writes.ts";
import type { GroupCommit, RunOptions } from "../../src/db/group_commit.ts";
import { toDbTime } from "../../src/db/time.ts";
import { findAttemptRow } from "../../src/domain/webhooks/delivery_repo.ts";
import { skipPending } from "../../src/domain/webhooks/delivery_repo.ts";
import { record } from "../../src/domain/webhooks/attempt_record_service.ts";
import type { SentAttempt } from "../../src/domain/webhooks/attempt_send_service.ts";

/** On libSQL, db.transaction() throws from now on (migrations excepted). */
function forbidTransactions(h: WebhookHarness): void {
  if (h.engine === "libsql") h.container.dbBatch!.forbidTransactions = true;
}

const FAILED: SentAttempt = {
  outcome: "5xx",
  success: false,
  statusCode: 500,
  errorMessage: "HTTP 500",
  durationMs: 1,
  excerpt: null,
  redirectLocation: null,
  redirectStatusCode: null,
};

/**
 * The container's group commit, with `between` run after each plan's reads
 * and before its writes: another writer's change in that gap (on libSQL
 * between the reads and the batch; on SQLite inside the transaction, before
 * the recorded writes run).
 */
function writingBetween(
  h: WebhookHarness,
  between: (db: typeof h.container.db) => Promise<void>,
): Pick<GroupCommit, "runPlanned"> {
  return {
    runPlanned: <T>(plan: Plan<T>, opts?: RunOptions) =>
      h.container.commits.runPlanned(async (db, writes) => {
        const finish = await plan(db, writes);
        await between(db as typeof h.container.db);
        return finish;
      }, opts),
  };
}

async function deliveryLog(h: WebhookHarness, id: string, status: string) {
  const res = await h.request(
    "GET",
    `/api/v2/webhooks/${id}/deliveries?status=${status}&limit=100`,
  );
  return res.body.data as Json[];
}

for (const engine of ENGINES) {
  webhookTest(
    `[${engine}] failed attempts, their retries, the auto-disable and its skipped queue, a test and a replay open no transaction`,
    async (h, receiver) => {
      let failing = true;
      receiver.answer(() =>
        failing ? new Response("down", { status: 500 }) : new Response("ok")
      );
      const hook = await h.subscribe({
        url: receiver.url,
        events: ["contact.created"],
      });
      for (let i = 0; i < 10; i++) await createContact(h, nextPhone());
      forbidTransactions(h);

      // Ten failures recorded together: the tenth disables the subscription
      // (once), and its queue (the ten retries) is skipped with its jobs.
      assert.equal(await h.deliver(), 10);
      const state = (await h.request("GET", `/api/v2/webhooks/${hook.id}`))
        .body.data;
      assert.equal(state.consecutiveFailures, 10);
      assert.equal(state.enabled, false);
      assert.equal(state.disabledReason, "auto");
      assert.equal(h.container.metrics.webhookAutoDisabled.get(), 1);
      assert.equal((await deliveryLog(h, hook.id, "failed")).length, 10);
      assert.equal((await deliveryLog(h, hook.id, "pending")).length, 0);
      const skipped = await deliveryLog(h, hook.id, "skipped");
      assert.equal(skipped.length, 10);
      const waiting = await h.container.db.selectFrom("jobs").select("id")
        .where("kind", "=", "webhook.deliver")
        .where("state", "in", ["available", "retryable"]).execute();
      assert.equal(waiting.length, 0);

      // A test is queued (and sent) while disabled; enabled again, a
      // skipped attempt replays.
      failing = false;
      const test = await h.request("POST", `/api/v2/webhooks/${hook.id}/test`);
      assert.equal(test.status, 202, JSON.stringify(test.body));
      assert.equal(await h.deliver(), 1);
      const on = await h.request("PATCH", `/api/v2/webhooks/${hook.id}`, {
        body: { enabled: true },
      });
      assert.equal(on.status, 200, JSON.stringify(on.body));
      const replay = await h.request(
        "POST",
        `/api/v2/webhooks/${hook.id}/replay/${skipped[0].id}`,
      );
      assert.equal(replay.status, 202, JSON.stringify(replay.body));
      assert.equal(await h.deliver(), 1);
      assert.equal(receiver.received.at(-1)!.json.eventId, skipped[0].eventId);
      assert.equal(
        (await h.request("GET", `/api/v2/webhooks/${hook.id}`)).body.data
          .consecutiveFailures,
        0,
      );

      // Disabled by hand: the queue is skipped in units too.
      failing = true;
      // (The contact is another path's: made with transactions allowed.)
      if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = false;
      await createContact(h, nextPhone());
      forbidTransactions(h);
      assert.equal(await h.deliver(), 1); // fails: a retry is queued
      const off = await h.request("PATCH", `/api/v2/webhooks/${hook.id}`, {
        body: { enabled: false },
      });
      assert.equal(off.status, 200, JSON.stringify(off.body));
      assert.equal((await deliveryLog(h, hook.id, "pending")).length, 0);
    },
    { engine },
  );

  webhookTest(
    `[${engine}] an attempt whose row another run wrote meanwhile gets no retry and no count; the others of its unit do`,
    async (h) => {
      const hook = await h.subscribe({
        url: "http://127.0.0.1:9/hook",
        events: ["contact.created"],
      });
      for (let i = 0; i < 2; i++) await createContact(h, nextPhone());
      const db = h.container.db;
      const jobs = await claim(db, {
        workerId: "w",
        limit: 10,
        leaseMs: 15_000,
        now: h.clock.now(),
        kinds: ["webhook.deliver"],
      });
      assert.equal(jobs.length, 2);
      const rows = await Promise.all(jobs.map(async (job) => {
        const { deliveryId } = job.payload as { deliveryId: string };
        return (await findAttemptRow(db, deliveryId))!;
      }));
      forbidTransactions(h);
      // Between the unit's reads and its writes, another run (a rescued
      // job) records the first row's attempt as a success.
      const stolen = rows[0]!.id;
      const deps = {
        ...h.container,
        commits: writingBetween(h, async (db) => {
          await sql`update webhook_deliveries set status = 'success'
            where id = ${stolen}`.execute(db);
        }),
      };
      const completed = new Map<string, boolean>();
      const at = toDbTime(h.clock.now());
      await Promise.all(jobs.map((job, i) =>
        record(deps, rows[i]!, FAILED, {
          ctx: {
            lease: job,
            markCompleted: (done) => completed.set(job.id, done),
          },
          at,
          done: h.clock.now(),
          firstAttemptAt: at,
        })
      ));
      const all = await db.selectFrom("webhook_deliveries")
        .select(["id", "root_id", "status", "attempt"]).orderBy("attempt")
        .execute();
      // The stolen row keeps the other run's result and gets no second
      // chain; the other failed and has its retry (with its job).
      assert.deepEqual(
        all.filter((r) => r.root_id === rows[0]!.root_id).map((r) => r.status),
        ["success"],
      );
      assert.deepEqual(
        all.filter((r) => r.root_id === rows[1]!.root_id)
          .map((r) => [r.status, r.attempt]),
        [["failed", 1], ["pending", 2]],
      );
      const retry = all.find((r) => r.status === "pending")!;
      const retryJob = await db.selectFrom("jobs").select("state")
        .where("unique_key", "=", `webhook.deliver:${retry.id}`)
        .executeTakeFirst();
      assert.equal(retryJob?.state, "available");
      const counters = await db.selectFrom("webhooks")
        .select(["consecutive_failures", "last_delivery_status"])
        .where("id", "=", hook.id).executeTakeFirstOrThrow();
      assert.deepEqual({ ...counters }, {
        consecutive_failures: 1,
        last_delivery_status: "failed",
      });
      // Both jobs completed (the stolen row's run owns its result, not its job).
      assert.deepEqual(jobs.map((j) => completed.get(j.id)), [true, true]);
    },
    { engine },
  );

  webhookTest(
    `[${engine}] skipping a disabled queue leaves an attempt that started running meanwhile alone`,
    async (h) => {
      const hook = await h.subscribe({
        url: "http://127.0.0.1:9/hook",
        events: ["contact.created"],
      });
      for (let i = 0; i < 3; i++) await createContact(h, nextPhone());
      const db = h.container.db;
      await db.updateTable("webhooks").set({ enabled: 0 })
        .where("id", "=", hook.id).execute();
      const rows = await db.selectFrom("webhook_deliveries").select("id")
        .orderBy("id").execute();
      assert.equal(rows.length, 3);
      forbidTransactions(h);
      // Read as skippable, then claimed by a worker before the writes.
      const started = `webhook.deliver:${rows[1]!.id}`;
      const commits = writingBetween(h, async (db) => {
        await sql`update jobs set state = 'running', lease_token = 't'
          where unique_key = ${started}`.execute(db);
      });
      const n = await skipPending(commits, hook.id, {
        now: toDbTime(h.clock.now()),
        limit: 50,
      });
      assert.equal(n, 2);
      const after = await sql<{ status: string; state: string }>`
        select d.status, j.state from webhook_deliveries d
        join jobs j on j.unique_key = 'webhook.deliver:' || d.id
        order by d.id`.execute(db);
      assert.deepEqual(after.rows.map((r) => ({ ...r })), [
        { status: "skipped", state: "completed" },
        { status: "pending", state: "running" },
        { status: "skipped", state: "completed" },
      ]);
    },
    { engine },
  );
}

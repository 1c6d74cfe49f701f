// Attempts that start together read their rows in one statement (with the
// chain a waiting one waits for); attempts recorded together cost a few
// statements in all, their jobs' completion one.
import assert from "node:assert/strict";
import { claim, PRIORITY } from "../../src/jobs/queue.ts";
import { findAttemptRow } from "../../src/domain/webhooks/delivery_repo.ts";
import { AttemptReader } from "../../src/domain/webhooks/attempt_read_service.ts";
import { record } from "../../src/domain/webhooks/attempt_record_service.ts";
import type { AttemptDeps } from "../../src/domain/webhooks/attempt.ts";
import type { SentAttempt } from "../../src/domain/webhooks/attempt_send_service.ts";
import { toDbTime } from "../../src/db/time.ts";
import {
  createContact,
  nextPhone,
  type WebhookHarness,
  webhookTest,
} from "../_support/webhooks.ts";
import { recording } from "../_support/recording.ts";
import { ENGINES } from "../_harness.ts";
import { type CompiledQuery, sql } from "kysely";
import type { Plan } from "../../src/db/planned_writes.ts";
import type { RunOptions } from "../../src/db/group_commit.ts";
import { attemptDelivery } from "../../src/domain/webhooks/attempt_service.ts";
import { RetryLater } from "../../src/errors.ts";
import { recordEvents } from "../../src/domain/events/event_service.ts";

const OK: SentAttempt = {
  outcome: "2xx",
  success: true,
  statusCode: 200,
  errorMessage: null,
  durationMs: 1,
  excerpt: null,
  redirectLocation: null,
  redirectStatusCode: null,
};

/** Claims the due delivery jobs, as the webhook pool would. */
function claimDeliveries(h: WebhookHarness) {
  return claim(h.container.db, {
    workerId: "w",
    limit: 20,
    leaseMs: 15_000,
    now: h.clock.now(),
    kinds: ["webhook.deliver"],
  });
}

/**
 * The container, its group commit's planned units recording their SQL in
 * `seen`: the reads as they run, the writes as they are planned (in the
 * order the batch runs them).
 */
function recordingDeps(h: WebhookHarness, seen: string[]): AttemptDeps {
  return {
    ...h.container,
    commits: {
      runPlanned: <T>(plan: Plan<T>, opts?: RunOptions) =>
        h.container.commits.runPlanned((db, writes) => {
          const add = writes.add.bind(writes);
          writes.add = (q) => {
            seen.push((q as CompiledQuery).sql);
            return add(q);
          };
          return plan(recording(db, seen), writes);
        }, opts),
    },
  };
}

webhookTest(
  "attempts recorded in one unit complete their jobs with one statement; a job whose lease was lost is reported not completed",
  async (h, receiver) => {
    await h.subscribe({ url: receiver.url, events: ["contact.created"] });
    for (let i = 0; i < 3; i++) await createContact(h, nextPhone());
    const db = h.container.db;
    const jobs = await claimDeliveries(h);
    assert.equal(jobs.length, 3);

    const seen: string[] = [];
    const deps = recordingDeps(h, seen);
    const marks = new Map<string, boolean>();
    const at = toDbTime(h.clock.now());
    const recorded = jobs.map(async (job, i) => {
      const { deliveryId } = job.payload as { deliveryId: string };
      const row = (await findAttemptRow(db, deliveryId))!;
      // The last one's lease was lost (expired and rescued by another worker).
      const lease = i === 2
        ? { id: job.id, leaseToken: "stolen", priority: job.priority }
        : job;
      await record(deps, row, OK, {
        ctx: { lease, markCompleted: (done) => marks.set(job.id, done) },
        at,
        done: h.clock.now(),
        firstAttemptAt: at,
      });
    });
    await Promise.all(recorded);

    const completing = seen.filter((s) =>
      s.startsWith("update jobs") && s.includes("'completed'")
    );
    assert.equal(completing.length, 1, seen.join("\n---\n"));
    assert.deepEqual(jobs.map((j) => marks.get(j.id)), [true, true, false]);
    const states = await db.selectFrom("jobs").select(["id", "state"])
      .where("id", "in", jobs.map((j) => j.id)).execute();
    const stateOf = new Map(states.map((r) => [r.id, r.state]));
    assert.deepEqual(jobs.map((j) => stateOf.get(j.id)), [
      "completed",
      "completed",
      "running",
    ]);
    const rows = await db.selectFrom("webhook_deliveries").select("status")
      .execute();
    assert.deepEqual(rows.map((r) => r.status), [
      "success",
      "success",
      "success",
    ]);
  },
);

webhookTest(
  "the rows asked for in one turn are read in one statement; an unknown id is undefined, a later turn reads again",
  async (h, receiver) => {
    await h.subscribe({ url: receiver.url, events: ["contact.created"] });
    for (let i = 0; i < 3; i++) await createContact(h, nextPhone());
    const ids = (await h.container.db.selectFrom("webhook_deliveries")
      .select("id").orderBy("id").execute()).map((r) => r.id);
    assert.equal(ids.length, 3);
    const seen: string[] = [];
    const reader = new AttemptReader(recording(h.container.db, seen));

    const rows = await Promise.all(
      [...ids, "no-such-id", ids[0]!].map((id) => reader.read(id)),
    );
    assert.equal(seen.length, 1);
    assert.deepEqual(rows.map((r) => r?.id), [...ids, undefined, ids[0]]);
    assert.equal(rows[0]!.status, "pending");
    assert.equal(rows[0]!.url, receiver.url);
    assert.equal(rows[0]!.enabled, 1);
    assert.ok(rows[0]!.data?.includes('"phoneNumber"'));

    assert.equal((await reader.read(ids[1]!))?.id, ids[1]);
    assert.equal(seen.length, 2);
  },
);

for (const engine of ENGINES) {
  webhookTest(
    `[${engine}] attempts recorded in one unit cost four statements whatever their number and subscriptions: counters, results, waiting attempts woken, jobs`,
    async (h) => {
      const events = ["contact.created", "conversation.created"];
      for (let i = 0; i < 2; i++) {
        await h.subscribe({ url: `http://127.0.0.1:9/hook/${i}`, events });
      }
      // Three contacts' contact.created, each with a conversation.created
      // that waits for it on both subscriptions.
      const accountId = h.tenant.account.id;
      const at = toDbTime(h.clock.now());
      await h.container.commits.run((trx) =>
        recordEvents(
          trx,
          accountId,
          ["c-1", "c-2", "c-3"].flatMap((id) => [
            { type: "contact.created", data: { id }, createdAt: at },
            {
              type: "conversation.created",
              data: { id: `v-${id}`, contactId: id },
              createdAt: at,
            },
          ]),
        )
      );
      const db = h.container.db;
      const jobs = await claimDeliveries(h);
      assert.equal(jobs.length, 6, "the contact.created ones: the rest wait");
      h.clock.advance(1_000);
      const done = h.clock.now();
      const seen: string[] = [];
      const deps = recordingDeps(h, seen);
      // The rows read first, so the six records reach the batcher in one
      // turn (one unit) on either engine.
      const rows = await Promise.all(jobs.map(async (job) => {
        const { deliveryId } = job.payload as { deliveryId: string };
        return (await findAttemptRow(db, deliveryId))!;
      }));
      await Promise.all(jobs.map((job, i) =>
        record(deps, rows[i]!, OK, {
          ctx: { lease: job, markCompleted: () => {} },
          at: toDbTime(done),
          done,
          firstAttemptAt: at,
        })
      ));
      assert.deepEqual(
        seen.map((s) => s.replace(/\s+/g, " ").trim().slice(0, 24)),
        [
          // Both subscriptions' counters, while their rows are pending: the
          // results are written after them.
          "with s(id, at) as (value",
          "with s(id, status, statu", // the six results
          "update jobs set run_at =", // the waiting attempts, through their rows
          "update jobs set state = ", // the six jobs completed
        ],
        seen.join("\n---\n"),
      );
      const waiting = await sql<{ run_at: string; state: string }>`
        select j.run_at, j.state from webhook_deliveries as d
        inner join jobs as j on j.unique_key = 'webhook.deliver:' || d.id
        where d.event = 'conversation.created'`.execute(db);
      assert.deepEqual(
        waiting.rows.map((w) => ({ ...w })),
        Array(6).fill({ run_at: toDbTime(done), state: "available" }),
      );
      const hooks = await db.selectFrom("webhooks")
        .select(["consecutive_failures", "last_delivery_at"]).execute();
      assert.deepEqual(
        hooks.map((w) => ({ ...w })),
        Array(2).fill({
          consecutive_failures: 0,
          last_delivery_at: toDbTime(done),
        }),
      );
    },
    // Its events are recorded in a transaction of the test's own.
    { engine, allowTransactions: true },
  );
}

webhookTest(
  "an attempt that waits for its contact's contact.created is put back after one read: the chain comes with its row",
  async (h, receiver) => {
    await h.subscribe({
      url: receiver.url,
      events: ["contact.created", "conversation.created"],
    });
    const at = toDbTime(h.clock.now());
    await h.container.commits.run((trx) =>
      recordEvents(trx, h.tenant.account.id, [
        { type: "contact.created", data: { id: "c-1" }, createdAt: at },
        {
          type: "conversation.created",
          data: { id: "v-1", contactId: "c-1" },
          createdAt: at,
        },
      ])
    );
    const waiting = await h.container.db.selectFrom("webhook_deliveries")
      .select("id").where("event", "=", "conversation.created")
      .executeTakeFirstOrThrow();
    const seen: string[] = [];
    const deps: AttemptDeps = {
      ...h.container,
      db: recording(h.container.db, seen),
    };
    const lease = { id: "j", leaseToken: "t", priority: PRIORITY.webhook };
    await assert.rejects(
      attemptDelivery(deps, waiting.id, { lease, markCompleted: () => {} }),
      (err) =>
        err instanceof RetryLater && /contact\.created/.test(err.message),
    );
    assert.equal(seen.length, 1, seen.join("\n---\n"));
    assert.equal(receiver.received.length, 0);
  },
);

// Attempts that start together read their rows in one statement; attempts
// recorded together complete their jobs in one statement.
import assert from "node:assert/strict";
import { claim } from "../../src/jobs/queue.ts";
import { findAttemptRow } from "../../src/domain/webhooks/delivery_repo.ts";
import { AttemptReader } from "../../src/domain/webhooks/attempt_read_service.ts";
import { record } from "../../src/domain/webhooks/attempt_record_service.ts";
import type { AttemptDeps } from "../../src/domain/webhooks/attempt.ts";
import type { SentAttempt } from "../../src/domain/webhooks/attempt_send_service.ts";
import { toDbTime } from "../../src/db/time.ts";
import { createContact, nextPhone, webhookTest } from "../_support/webhooks.ts";
import { recording } from "../_support/recording.ts";

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

webhookTest(
  "attempts recorded in one unit complete their jobs with one statement; a job whose lease was lost is reported not completed",
  async (h, receiver) => {
    await h.subscribe({ url: receiver.url, events: ["contact.created"] });
    for (let i = 0; i < 3; i++) await createContact(h, nextPhone());
    const db = h.container.db;
    const jobs = await claim(db, {
      workerId: "w",
      limit: 10,
      leaseMs: 15_000,
      now: h.clock.now(),
      kinds: ["webhook.deliver"],
    });
    assert.equal(jobs.length, 3);

    const seen: string[] = [];
    const deps: AttemptDeps = {
      ...h.container,
      commits: {
        run: (fn, opts) =>
          h.container.commits.run((trx) => fn(recording(trx, seen)), opts),
      },
    };
    const marks = new Map<string, boolean>();
    const at = toDbTime(h.clock.now());
    const recorded = jobs.map(async (job, i) => {
      const { deliveryId } = job.payload as { deliveryId: string };
      const row = (await findAttemptRow(db, deliveryId))!;
      // The last one's lease was lost (expired and rescued by another worker).
      const lease = i === 2 ? { id: job.id, leaseToken: "stolen" } : job;
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

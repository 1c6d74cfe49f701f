// Recording an attempt: its result, the next attempt, the counters and the
// job's completion in one atomic unit (planned writes: one write batch on
// libSQL, the group transaction on SQLite); then metrics and logs.
import type { WebhookDeliveriesTable } from "../../db/schema.ts";
import type { Answers, PlannedWrites } from "../../db/planned_writes.ts";
import { batcherOf, RecordBatcher } from "./record_batcher.ts";
import { newId } from "../../ids.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import {
  completeManyQueries,
  enqueueManyWhere,
  PRIORITY,
} from "../../jobs/queue.ts";
import {
  WEBHOOK_MAX_ATTEMPTS,
  webhookRetryDelayMs,
} from "../../jobs/retry_policy.ts";
import {
  type AttemptRow,
  finishAttempt,
  finishAttempts,
  insertRetries,
  runDependentsNow,
  skipQueue,
} from "./delivery_repo.ts";
import { type SentAttempt } from "./attempt_send_service.ts";
import { NOT_ATTEMPTED, pendingRow } from "./delivery.ts";
import { deliveryJob } from "./fanout_service.ts";
import { AUTO_DISABLE_AFTER } from "./webhook.ts";
import { countFailure, recordSuccesses } from "./webhook_repo.ts";
import type { AttemptContext, AttemptDeps } from "./attempt.ts";

/** A Retry-After never pushes a retry further than this. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1_000;
/** Tries of the unit that records an attempt (a retry of the job would send again). */
const RECORD_TRIES = 4;
/**
 * How long a record waits for others to share its commit: attempts end one
 * per response, each in its own turn of the event loop, and a commit costs
 * more than the record's writes. Its job holds its slot meanwhile.
 */
export const RECORD_GATHER = { gatherMs: 2 } as const;

/** Ends a row without an attempt (skipped), with its job. */
export async function finish(
  deps: AttemptDeps,
  row: AttemptRow,
  ctx: AttemptContext,
  result: Pick<
    WebhookDeliveriesTable,
    "status" | "error_message" | "next_attempt_at"
  >,
): Promise<void> {
  await deps.commits.runPlanned(async (_db, writes) => {
    const now = deps.clock.now();
    await finishAttempt(writes.db, row.id, {
      ...NOT_ATTEMPTED,
      ...result,
      first_attempt_at: row.first_attempt_at,
    });
    await wakeDependents(writes, [row], now);
    return completeJobs(writes, [ctx], now);
  }, RECORD_GATHER);
}

/**
 * Completes the attempts' jobs in one statement; once committed, tells each
 * runner whether its job was (its answer names the jobs completed).
 */
function completeJobs(
  writes: PlannedWrites,
  ctxs: readonly AttemptContext[],
  now: Date,
): (answers: Answers) => void {
  const handles = completeManyQueries(ctxs.map((c) => c.lease), now)
    .map((q) => writes.add(q));
  return (answers) => {
    const done = new Set(
      handles.flatMap((h) =>
        (answers.of(h).rows as { id: string }[]).map((r) => r.id)
      ),
    );
    for (const c of ctxs) c.markCompleted(done.has(c.lease.id));
  };
}

/** Once contact.created deliveries end, what waited for them runs at once (one statement). */
async function wakeDependents(
  writes: PlannedWrites,
  rows: readonly AttemptRow[],
  now: Date,
) {
  const roots = rows.filter((r) => r.event === "contact.created")
    .map((r) => r.root_id);
  await runDependentsNow(writes.db, roots, toDbTime(now));
}

/** When the next attempt runs, or null when this one ends the delivery. */
function nextAttemptAt(row: AttemptRow, sent: SentAttempt, now: Date) {
  if (sent.success || row.kind === "test") return null;
  if (sent.permanent || row.attempt >= WEBHOOK_MAX_ATTEMPTS) return null;
  const scheduled = webhookRetryDelayMs(row.attempt);
  const asked = Math.min(sent.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
  return addMs(now, Math.max(scheduled, asked));
}

/** A made attempt waiting for its record. */
interface Made {
  row: AttemptRow;
  sent: SentAttempt;
  t: { ctx: AttemptContext; at: string; done: Date; firstAttemptAt: string };
  next: Date | null;
  nextAt: string | null;
}

/** The recorder of each group commit (one per container). */
const recorderOf = batcherOf((deps: AttemptDeps) =>
  new RecordBatcher(deps.commits, {
    plan: (_db, writes, made: Made[]) => planMade(writes, made),
  }, RECORD_GATHER)
);

/** Records a made attempt (see the top of this file). */
export async function record(
  deps: AttemptDeps,
  row: AttemptRow,
  sent: SentAttempt,
  t: Made["t"],
): Promise<void> {
  const next = nextAttemptAt(row, sent, t.done);
  const nextAt = next ? toDbTime(next) : null;
  const made: Made = { row, sent, t, next, nextAt };
  const disabled = await withRetries(deps, () => recorderOf(deps).add(made));
  observe(deps, row, sent, { nextAt, disabled });
  if (disabled) await skipQueue(deps, row.webhook_id, t.at);
}

/**
 * Records the attempts that ended together, in one unit, without a read: a
 * row another run already wrote (no longer pending) must get no retry and
 * no count, and the batch cannot ask first, so the writes that follow a
 * result go before it, each only while its row is still pending: the
 * retries (one statement) and their jobs (one more, each only once its
 * retry row is in), the subscriptions' counters; then the results (one
 * statement), the attempts that waited for an ended chain woken, and the
 * jobs completed (one statement). Per attempt, whether its failure
 * disabled the subscription (known once committed).
 */
async function planMade(
  writes: PlannedWrites,
  made: Made[],
): Promise<(answers: Answers) => boolean[]> {
  const now = made.at(-1)!.t.done;
  const retries = made.filter((m) => m.next !== null).map(retryOf);
  await insertRetries(
    writes.db,
    retries.map((r) => ({ after: r.after, row: r.row })),
  );
  await enqueueManyWhere(
    writes.db,
    retries.map((r) => ({
      key: r.row.id,
      job: deliveryJob(r.row, { runAt: r.runAt, priority: r.priority }),
    })),
    "exists (select 1 from webhook_deliveries as d where d.id = v.k)",
    now,
  );
  const disabling = await countOutcomes(
    writes,
    made.filter((m) => m.row.kind !== "test"),
  );
  await finishAttempts(
    writes.db,
    made.map(({ row, sent, t, nextAt }) => ({
      id: row.id,
      result: {
        status: sent.success ? "success" : "failed",
        status_code: sent.statusCode,
        outcome: sent.outcome,
        error_message: sent.errorMessage,
        duration_ms: sent.durationMs,
        response_excerpt: sent.excerpt,
        redirect_location: sent.redirectLocation,
        redirect_status_code: sent.redirectStatusCode,
        first_attempt_at: t.firstAttemptAt,
        attempted_at: t.at,
        next_attempt_at: nextAt,
      },
    })),
  );
  await wakeDependents(
    writes,
    made.filter((m) => m.next === null).map((m) => m.row),
    now,
  );
  const completed = completeJobs(writes, made.map((m) => m.t.ctx), now);
  return (answers) => {
    completed(answers);
    return made.map((m) => {
      const handle = disabling.get(m);
      return handle !== undefined && answers.of(handle).rows.length > 0;
    });
  };
}

/** The pending row, due time and lane (its job's) of a failed attempt's retry. */
function retryOf({ row, t, next, nextAt }: Made) {
  return {
    after: row.id,
    // A manual test or replay retries in the event lane, behind live work.
    priority: Math.max(t.ctx.lease.priority, PRIORITY.webhook),
    row: pendingRow({
      id: newId(t.done.getTime()),
      account_id: row.account_id,
      webhook_id: row.webhook_id,
      root_id: row.root_id,
      event_id: row.event_id,
      event: row.event,
      subject_id: row.subject_id,
      kind: row.kind,
      attempt: row.attempt + 1,
      payload_hash: row.payload_hash,
      first_attempt_at: t.firstAttemptAt,
      next_attempt_at: nextAt,
      created_at: t.at,
    }),
    runAt: next!,
  };
}

/**
 * The subscriptions' counters, in the order the attempts ended, each only
 * while its attempt's row is still pending: one write for every
 * subscription whose attempts all succeeded, else two per attempt (a
 * failure counts towards auto-disable: countFailure). Returns, per failed
 * attempt, the handle of the statement that answers whether it disabled
 * its subscription.
 */
async function countOutcomes(
  writes: PlannedWrites,
  made: Made[],
): Promise<Map<Made, number>> {
  const byHook = Map.groupBy(made, (m) => m.row.webhook_id);
  const disabling = new Map<Made, number>();
  const succeeded: { id: string; at: string }[] = [];
  for (const [webhookId, list] of byHook) {
    if (list.every((m) => m.sent.success)) {
      const at = list.map((m) => m.t.at).reduce((a, b) => a > b ? a : b);
      succeeded.push({ id: webhookId, at });
      continue;
    }
    for (const m of list) {
      if (m.sent.success) {
        await recordSuccesses(writes.db, [{ id: webhookId, at: m.t.at }], [
          m.row.id,
        ]);
        continue;
      }
      await countFailure(writes.db, {
        webhookId,
        deliveryId: m.row.id,
        at: m.t.at,
      });
      disabling.set(m, writes.last);
    }
  }
  await recordSuccesses(
    writes.db,
    succeeded,
    made.filter((m) => m.sent.success).map((m) => m.row.id),
  );
  return disabling;
}

/**
 * Runs the recording unit, trying again on database errors: the
 * receiver already has this attempt, and failing the job would send it again.
 */
async function withRetries<T>(
  deps: AttemptDeps,
  write: () => Promise<T>,
): Promise<T> {
  for (let i = 1;; i++) {
    try {
      return await write();
    } catch (err) {
      if (i >= RECORD_TRIES) throw err;
      deps.log.warn("Cannot record a webhook attempt; trying again", { err });
      await new Promise((resolve) => setTimeout(resolve, 50 * 4 ** i));
    }
  }
}

function observe(
  deps: AttemptDeps,
  row: AttemptRow,
  sent: SentAttempt,
  after: { nextAt: string | null; disabled: boolean },
): void {
  deps.metrics.webhookDeliveries.inc({ outcome: sent.outcome, kind: row.kind });
  deps.metrics.webhookDuration.observe(
    { outcome: sent.outcome },
    sent.durationMs / 1_000,
  );
  const fields = {
    webhookId: row.webhook_id,
    deliveryId: row.id,
    eventId: row.event_id,
    event: row.event,
    attempt: row.attempt,
    kind: row.kind,
    outcome: sent.outcome,
    statusCode: sent.statusCode,
    durationMs: sent.durationMs,
  };
  if (sent.success) deps.log.debug("Webhook delivered", fields);
  else {
    deps.log.warn("Webhook attempt failed", {
      ...fields,
      error: sent.errorMessage,
      nextAttemptAt: after.nextAt,
    });
  }
  if (sent.redirectLocation) {
    deps.log.info("Webhook answered with a redirect; it was not re-POSTed", {
      ...fields,
      location: sent.redirectLocation,
      locationStatusCode: sent.redirectStatusCode,
    });
  }
  if (after.disabled) {
    deps.metrics.webhookAutoDisabled.inc();
    deps.log.warn(
      `Webhook disabled after ${AUTO_DISABLE_AFTER} consecutive failed attempts`,
      {
        webhookId: row.webhook_id,
        eventId: row.event_id,
        attempt: row.attempt,
      },
    );
  }
}

import type { Db, Executor, WebhookDeliveriesTable } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import type { Logger } from "../../log.ts";
import { RetryLater } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import { enqueue, runNow } from "../../jobs/queue.ts";
import {
  WEBHOOK_MAX_ATTEMPTS,
  webhookRetryDelayMs,
} from "../../jobs/retry_policy.ts";
import type { EgressClient } from "../../egress/http_client.ts";
import type { AppMetrics } from "../../metrics/app_metrics.ts";
import {
  type AttemptRow,
  dependentsOf,
  findAttemptRow,
  finishAttempt,
  insertDeliveries,
  pendingOfChain,
  skipQueue,
} from "./delivery_repo.ts";
import { sendAttempt, type SentAttempt } from "./attempt_send.ts";
import { deliveryJobKey, NOT_ATTEMPTED, pendingRow } from "./delivery.ts";
import { payloadHash, testDataText } from "./envelope.ts";
import { deliveryJob } from "./fanout_service.ts";
import { AUTO_DISABLE_AFTER } from "./webhook.ts";
import { recordDeliveryOutcome } from "./webhook_repo.ts";

export interface AttemptDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  secrets: SecretBox;
  egress: Pick<EgressClient, "request">;
  metrics: AppMetrics;
}

export interface AttemptContext {
  signal?: AbortSignal;
  /** Completes the job in the transaction that records the attempt. */
  completeIn(trx: Executor): Promise<boolean>;
}

/** A Retry-After never pushes a retry further than this. */
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1_000;
/**
 * How soon an attempt that waits for its contact.created looks again; the end
 * of that delivery also wakes it at once (wakeDependents), this only covers a
 * race with that wake-up.
 */
const WAIT_POLL_MS = 50;

/**
 * Makes the attempt of one pending delivery row: sends the signed envelope
 * and, in one transaction with the job's completion, records the result, the
 * next attempt (DESIGN §3 schedule, Retry-After honoured) and the
 * subscription's counters. A disabled subscription's row is skipped unsent; a
 * row that waits for its contact's contact.created is put back unattempted.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  deliveryId: string,
  ctx: AttemptContext,
): Promise<void> {
  const row = await findAttemptRow(deps.db, deliveryId);
  if (!row || row.status !== "pending") return;
  const now = deps.clock.now();
  if (row.after_root_id) {
    const first = await pendingOfChain(deps.db, row.after_root_id);
    if (first) {
      const due = first.next_attempt_at ? Date.parse(first.next_attempt_at) : 0;
      throw new RetryLater(
        Math.max(WAIT_POLL_MS, due - now.getTime() + WAIT_POLL_MS),
        "Waiting for the contact.created of this contact to be delivered first",
      );
    }
  }
  if (row.kind !== "test" && row.enabled !== 1) {
    await finish(deps, row, ctx, {
      status: "skipped",
      error_message: "Skipped: the subscription is disabled",
      next_attempt_at: null,
    });
    return;
  }
  const dataText = row.data ?? testDataText(row.event_id);
  const at = toDbTime(now);
  const firstAttemptAt = row.first_attempt_at ?? at;
  let sent: SentAttempt;
  if (payloadHash(dataText) !== row.payload_hash) {
    sent = {
      outcome: "error",
      success: false,
      statusCode: null,
      errorMessage:
        `Not sent: the data of event "${row.event_id}" is no longer kept`,
      durationMs: 0,
      excerpt: null,
      redirectLocation: null,
      redirectStatusCode: null,
      permanent: true,
    };
  } else {
    sent = await sendAttempt(deps.egress, {
      url: row.url,
      webhookId: row.webhook_id,
      event: row.event,
      eventId: row.event_id,
      attempt: row.attempt,
      // A test carries its creation time, so its samplePayload is what is sent.
      deliveredAt: row.kind === "test" ? row.created_at : at,
      firstAttemptAt,
      dataText,
      secret: await deps.secrets.openCached(row.secret_enc),
      customHeaders: row.headers_enc
        ? JSON.parse(await deps.secrets.openCached(row.headers_enc))
        : {},
      timestamp: Math.floor(now.getTime() / 1_000),
    }, ctx.signal ? { signal: ctx.signal } : {});
  }
  const done = deps.clock.now();
  await record(deps, row, sent, {
    ctx,
    at: toDbTime(done),
    done,
    firstAttemptAt,
  });
}

async function finish(
  deps: AttemptDeps,
  row: AttemptRow,
  ctx: AttemptContext,
  result: Pick<
    WebhookDeliveriesTable,
    "status" | "error_message" | "next_attempt_at"
  >,
): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    await finishAttempt(trx, row.id, {
      ...NOT_ATTEMPTED,
      ...result,
      first_attempt_at: row.first_attempt_at,
    });
    await wakeDependents(trx, row, deps.clock.now());
    await ctx.completeIn(trx);
  });
}

/** Once a contact.created delivery ends, what waited for it runs at once. */
async function wakeDependents(trx: Executor, row: AttemptRow, now: Date) {
  if (row.event !== "contact.created") return;
  const ids = await dependentsOf(trx, row.root_id);
  await runNow(trx, ids.map(deliveryJobKey), now);
}

/** When the next attempt runs, or null when this one ends the delivery. */
function nextAttemptAt(row: AttemptRow, sent: SentAttempt, now: Date) {
  if (sent.success || row.kind === "test") return null;
  if (sent.permanent || row.attempt >= WEBHOOK_MAX_ATTEMPTS) return null;
  const scheduled = webhookRetryDelayMs(row.attempt);
  const asked = Math.min(sent.retryAfterMs ?? 0, MAX_RETRY_AFTER_MS);
  return addMs(now, Math.max(scheduled, asked));
}

async function record(
  deps: AttemptDeps,
  row: AttemptRow,
  sent: SentAttempt,
  t: { ctx: AttemptContext; at: string; done: Date; firstAttemptAt: string },
): Promise<void> {
  const next = nextAttemptAt(row, sent, t.done);
  const nextAt = next ? toDbTime(next) : null;
  const disabled = await deps.db.transaction().execute(async (trx) => {
    const written = await finishAttempt(trx, row.id, {
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
    });
    if (!written) {
      await t.ctx.completeIn(trx);
      return false;
    }
    if (next) {
      const retry = pendingRow({
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
      });
      await insertDeliveries(trx, [retry]);
      await enqueue(trx, deliveryJob(retry, { runAt: next }), t.done);
    } else {
      await wakeDependents(trx, row, t.done);
    }
    const off = row.kind === "test"
      ? false
      : await recordDeliveryOutcome(trx, row.webhook_id, {
        success: sent.success,
        at: t.at,
      });
    await t.ctx.completeIn(trx);
    return off;
  });
  observe(deps, row, sent, { nextAt, disabled });
  if (disabled) await skipQueue(deps.db, row.webhook_id, t.at);
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

import { RetryLater } from "../../errors.ts";
import { toDbTime } from "../../db/time.ts";
import { type AttemptRow, raiseChains } from "./delivery_repo.ts";
import { attemptReaderOf } from "./attempt_read_service.ts";
import { sendAttempt, type SentAttempt } from "./attempt_send_service.ts";
import { finish, record } from "./attempt_record_service.ts";
import type { AttemptContext, AttemptDeps } from "./attempt.ts";

export type { AttemptContext, AttemptDeps } from "./attempt.ts";
import { payloadHash, testDataText } from "./envelope.ts";

/** Shortest and longest wait of an attempt put back behind its contact.created. */
const WAIT_POLL_MS = 50;
const WAIT_MAX_MS = 2_000;

/**
 * Makes the attempt of one pending delivery row: sends the signed envelope
 * and, in one atomic unit with the job's completion, records the result, the
 * next attempt (DESIGN §3 schedule, Retry-After honoured) and the
 * subscription's counters. A disabled subscription's row is skipped unsent; a
 * row that waits for its contact's contact.created is put back unattempted.
 * An attempt cut off by shutdown or a lost lease is not recorded: it runs again.
 */
export async function attemptDelivery(
  deps: AttemptDeps,
  deliveryId: string,
  ctx: AttemptContext,
): Promise<void> {
  // With the rows of the other jobs of its claim, in one read.
  const row = await attemptReaderOf(deps.db).read(deliveryId);
  if (!row || row.status !== "pending") return;
  const now = deps.clock.now();
  if (row.first_due !== null) {
    // A retry queued after the chain was raised (its attempt was running
    // then) is in the lane it had: take it along to this one.
    const lane = ctx.lease.priority;
    if (row.first_priority !== null && row.first_priority > lane) {
      await deps.commits.runPlanned(async (_db, writes) => {
        await raiseChains(writes.db, [row.after_root_id!], lane);
        return () => undefined;
      });
    }
    waitForFirst(row.first_due, now);
  }
  if (row.kind !== "test" && row.enabled !== 1) {
    await finish(deps, row, ctx, {
      status: "skipped",
      error_message: "Skipped: the subscription is disabled",
      next_attempt_at: null,
    });
    return;
  }
  const firstAttemptAt = row.first_attempt_at ?? toDbTime(now);
  const sent = await attemptOnce(deps, row, { now, firstAttemptAt, ctx });
  if (ctx.signal?.aborted) {
    throw new Error("Attempt cut off (shutdown or lost lease); it runs again");
  }
  const done = deps.clock.now();
  await record(deps, row, sent, {
    ctx,
    at: toDbTime(done),
    done,
    firstAttemptAt,
  });
}

/**
 * Puts the attempt back while the contact's contact.created is still on its
 * way (`due`: when its pending attempt runs, read with the row; its end
 * wakes this job at once, the wait only covers a race with that wake-up, so
 * it grows with how long the first one has been in flight).
 */
function waitForFirst(due: string, now: Date): void {
  const at = due ? Date.parse(due) : now.getTime();
  const ms = at > now.getTime()
    ? at - now.getTime() + WAIT_POLL_MS
    : Math.min(Math.max(WAIT_POLL_MS, (now.getTime() - at) / 2), WAIT_MAX_MS);
  throw new RetryLater(
    ms,
    "Waiting for the contact.created of this contact to be delivered first",
  );
}

/** Sends the attempt; every failure, a local one included, comes back as a failed attempt. */
async function attemptOnce(
  deps: AttemptDeps,
  row: AttemptRow,
  t: { now: Date; firstAttemptAt: string; ctx: AttemptContext },
): Promise<SentAttempt> {
  const dataText = row.data ?? testDataText(row.event_id);
  if (payloadHash(dataText) !== row.payload_hash) {
    return failed(
      `Not sent: the data of event "${row.event_id}" is no longer kept`,
      true,
    );
  }
  let secret: string;
  let customHeaders: Record<string, string>;
  try {
    secret = await deps.secrets.openCached(row.secret_enc);
    customHeaders = row.headers_enc
      ? JSON.parse(await deps.secrets.openCached(row.headers_enc))
      : {};
  } catch (err) {
    deps.log.error("Cannot open a webhook's secret or headers", {
      webhookId: row.webhook_id,
      err,
    });
    return failed(
      "Not sent: the subscription's secret or headers cannot be decrypted (was SECRET_KEY changed?)",
      false,
    );
  }
  return await sendAttempt(deps.egress, {
    url: row.url,
    webhookId: row.webhook_id,
    event: row.event,
    eventId: row.event_id,
    attempt: row.attempt,
    // A test carries its creation time, so its samplePayload is what is sent.
    deliveredAt: row.kind === "test" ? row.created_at : toDbTime(t.now),
    firstAttemptAt: t.firstAttemptAt,
    dataText,
    secret,
    customHeaders,
    timestamp: Math.floor(t.now.getTime() / 1_000),
  }, t.ctx.signal ? { signal: t.ctx.signal } : {});
}

function failed(errorMessage: string, permanent: boolean): SentAttempt {
  return {
    outcome: "error",
    success: false,
    statusCode: null,
    errorMessage,
    durationMs: 0,
    excerpt: null,
    redirectLocation: null,
    redirectStatusCode: null,
    permanent,
  };
}

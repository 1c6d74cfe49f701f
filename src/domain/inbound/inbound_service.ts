import type { Db } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { AppError, RetryLater } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { safeEqual } from "../../crypto.ts";
import { toDbTime } from "../../db/time.ts";
import { enqueue, PRIORITY } from "../../jobs/queue.ts";
import { MetaPayload } from "./meta_payload.ts";
import { applyInboundMessage, applyStatus } from "./inbound_apply_service.ts";
import { MetaValue } from "./meta_payload.ts";
import { findChannelByUpstreamId } from "../channels/channel_repo.ts";

export interface InboundDeps {
  db: Db;
  clock: Clock;
  log: Logger;
  config: {
    metaAppSecret: string | undefined;
    metaVerifyToken: string | undefined;
  };
  jobs: { notify(lanes?: Iterable<number>): void };
}

/** How long an unmatched status report is retried (our send may not have committed yet). */
const UNMATCHED_RETRY_WINDOW_MS = 10 * 60 * 1000;
const UNMATCHED_RETRY_DELAY_MS = 2_000;

/** Answers Meta's verification handshake: the challenge when mode and token match. */
export function verifyHandshake(
  deps: Pick<InboundDeps, "config">,
  query: { mode?: string; token?: string; challenge?: string },
): string {
  const expected = deps.config.metaVerifyToken;
  if (
    !expected || query.mode !== "subscribe" ||
    !safeEqual(query.token ?? "", expected) || !query.challenge
  ) {
    throw new AppError(
      "FORBIDDEN",
      "Webhook verification failed: mode or verify token does not match",
    );
  }
  return query.challenge;
}

/**
 * Stores a payload whose signature the caller verified, with its processing
 * job, in one transaction; processing happens later, from the stored
 * payload. A body that is not JSON or not a Meta envelope is stored with its
 * error and no job, and logged: it is still acknowledged, since Meta would
 * retry it for days.
 */
export async function acceptMetaWebhook(
  deps: InboundDeps,
  rawBody: Uint8Array,
): Promise<string> {
  const text = new TextDecoder().decode(rawBody);
  const error = envelopeError(text);
  const now = deps.clock.now();
  const id = newId(now.getTime());
  await deps.db.transaction().execute(async (trx) => {
    await trx.insertInto("inbound_payloads").values({
      id,
      body: text,
      received_at: toDbTime(now),
      processed_at: error ? toDbTime(now) : null,
      error,
    }).execute();
    if (error) return;
    await enqueue(trx, {
      kind: "meta.inbound",
      payload: { payloadId: id },
      priority: PRIORITY.inbound,
      uniqueKey: `meta.inbound:${id}`,
      maxAttempts: 20,
    }, now);
  });
  if (error) {
    deps.log.warn("Stored a signed webhook that cannot be processed", {
      payloadId: id,
      error,
    });
  } else deps.jobs.notify([PRIORITY.inbound]);
  return id;
}

/** Why a webhook body cannot be processed, or null when it is a Meta envelope. */
function envelopeError(text: string): string | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return "Cannot parse webhook body: it is not valid JSON";
  }
  return MetaPayload.safeParse(parsed).success
    ? null
    : "Cannot read webhook body: it is not a Meta webhook envelope";
}

/**
 * Applies a stored payload: every message and status in every entry and
 * change, each in its own transaction and idempotent on upstream ids, so a
 * re-run after a crash or a Meta retry changes nothing twice.
 */
export async function processInboundPayload(
  deps: InboundDeps,
  payloadId: string,
): Promise<void> {
  const stored = await deps.db.selectFrom("inbound_payloads").selectAll()
    .where("id", "=", payloadId).executeTakeFirst();
  if (!stored) return;
  const payload = MetaPayload.parse(JSON.parse(stored.body));
  let unmatched = 0;
  for (const entry of payload.entry) {
    for (const change of entry.changes) {
      if (change.field !== "messages") continue;
      const value = MetaValue.safeParse(change.value);
      if (!value.success) {
        deps.log.warn("Skipping malformed webhook change", { payloadId });
        continue;
      }
      const channel = await findChannelByUpstreamId(
        deps.db,
        value.data.metadata.phone_number_id,
      );
      if (!channel) {
        deps.log.warn("Webhook for an unknown phone number id", {
          payloadId,
          phoneNumberId: value.data.metadata.phone_number_id,
        });
        continue;
      }
      for (const message of value.data.messages ?? []) {
        await applyInboundMessage(deps, channel, {
          message,
          contacts: value.data.contacts ?? [],
        });
      }
      for (const status of value.data.statuses ?? []) {
        if (!(await applyStatus(deps, channel, status))) unmatched++;
      }
      for (const error of value.data.errors ?? []) {
        deps.log.warn("Upstream reported a system error", { payloadId, error });
      }
    }
  }
  const now = deps.clock.now();
  const age = now.getTime() - Date.parse(stored.received_at);
  if (unmatched > 0 && age < UNMATCHED_RETRY_WINDOW_MS) {
    // Not an attempt: our send may just not have committed its upstream id yet.
    throw new RetryLater(
      UNMATCHED_RETRY_DELAY_MS,
      `Cannot match ${unmatched} status report(s) to a message yet`,
    );
  }
  await deps.db.updateTable("inbound_payloads").set({
    processed_at: toDbTime(now),
    error: unmatched
      ? `${unmatched} status report(s) matched no message`
      : null,
  }).where("id", "=", payloadId).execute();
}

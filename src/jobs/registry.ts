import type { Container } from "../container.ts";
import { z } from "zod";
import { AppError, RetryLater } from "../errors.ts";
import { deliverMessage } from "../domain/messages/delivery_service.ts";
import { processInboundPayload } from "../domain/inbound/inbound_service.ts";
import {
  retryUnmatchedStatus,
  STATUS_RETRY_JOB,
} from "../domain/inbound/unmatched_status_service.ts";
import { downloadInboundMedia } from "../domain/media/media_service.ts";
import { attemptDelivery } from "../domain/webhooks/attempt_service.ts";
import { DELIVER_JOB } from "../domain/webhooks/fanout_service.ts";
import {
  queueAllRefreshes,
  REFRESH_ALL_JOB,
  REFRESH_JOB,
  refreshSocialAccount,
} from "../domain/social/refresh_service.ts";
import { type JobContext, type JobHandler, Snooze } from "./worker_pool.ts";
import { maintenanceHandlers } from "./maintenance.ts";

/** Payloads carry ids, not copies: handlers reload the current state. */
const MessagePayload = z.object({ messageId: z.string() });
const InboundPayload = z.object({ payloadId: z.string() });
const StatusRetryPayload = z.object({
  payloadId: z.string(),
  entry: z.number().int(),
  change: z.number().int(),
  status: z.number().int(),
});
const MediaPayload = z.object({ mediaId: z.string() });
const DeliveryPayload = z.object({ deliveryId: z.string() });
const SocialPayload = z.object({ socialAccountId: z.string() });

function parse<T>(schema: z.ZodType<T>, payload: unknown, kind: string): T {
  const result = schema.safeParse(payload);
  if (!result.success) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot run job "${kind}": malformed payload`,
    );
  }
  return result.data;
}

function attemptOf(ctx: JobContext) {
  return {
    attempt: ctx.job.attempt,
    maxAttempts: ctx.job.maxAttempts,
    signal: ctx.signal,
  };
}

/** A domain "not now" becomes the pool's Snooze (no attempt spent). */
function deferrable(handler: JobHandler): JobHandler {
  return async (payload, ctx) => {
    try {
      await handler(payload, ctx);
    } catch (err) {
      if (err instanceof RetryLater) throw new Snooze(err.delayMs, err.message);
      throw err;
    }
  };
}

/** Every job kind the program runs, with its handler. */
export function createJobHandlers(c: Container): Record<string, JobHandler> {
  return {
    "message.send": deferrable(async (payload, ctx) => {
      const { messageId } = parse(MessagePayload, payload, "message.send");
      await deliverMessage(c, messageId, attemptOf(ctx));
    }),
    "meta.inbound": deferrable(async (payload) => {
      const { payloadId } = parse(InboundPayload, payload, "meta.inbound");
      await processInboundPayload(c, payloadId);
    }),
    [STATUS_RETRY_JOB]: deferrable(async (payload) => {
      const at = parse(StatusRetryPayload, payload, STATUS_RETRY_JOB);
      await retryUnmatchedStatus(c, at);
    }),
    "media.download": async (payload, ctx) => {
      const { mediaId } = parse(MediaPayload, payload, "media.download");
      await downloadInboundMedia(c, mediaId, attemptOf(ctx));
    },
    [DELIVER_JOB]: deferrable(async (payload, ctx) => {
      const { deliveryId } = parse(DeliveryPayload, payload, DELIVER_JOB);
      await attemptDelivery(c, deliveryId, {
        signal: ctx.signal,
        completeIn: ctx.completeIn,
      });
    }),
    // A spent quota snoozes the refresh to the next window, its place saved.
    [REFRESH_JOB]: deferrable(async (payload, ctx) => {
      const { socialAccountId } = parse(SocialPayload, payload, REFRESH_JOB);
      await refreshSocialAccount(c, socialAccountId, { signal: ctx.signal });
    }),
    [REFRESH_ALL_JOB]: async (_payload, ctx) => {
      const queued = await queueAllRefreshes(
        c,
        ctx.job.uniqueKey ?? ctx.job.id,
      );
      ctx.log.info("Queued social refreshes", { queued });
    },
    ...maintenanceHandlers({
      db: c.db,
      clock: c.clock,
      retentionDays: c.config.webhookRetentionDays,
    }),
  };
}

/**
 * Splits the handlers between the two pools: webhook attempts wait on other
 * people's servers, so they get their own, wider pool with a per-subscription
 * cap; everything else shares the main one.
 */
export function splitHandlers(handlers: Record<string, JobHandler>): {
  main: Record<string, JobHandler>;
  webhooks: Record<string, JobHandler>;
} {
  const { [DELIVER_JOB]: deliver, ...main } = handlers;
  return { main, webhooks: deliver ? { [DELIVER_JOB]: deliver } : {} };
}

/**
 * Every job kind's handler, checked against the kinds table (jobs/kinds.ts):
 * a kind without a handler here, or a handler for a kind not there, fails
 * the type check. Each handler gets its payload parsed by its kind's schema,
 * a domain "not now" (RetryLater) becomes the pool's Snooze, and a failure
 * that is final (jobs/attempts.ts) runs the kind's final-failure hook.
 */
import type { Container } from "../container.ts";
import { AppError, RetryLater } from "../errors.ts";
import { isLastAttempt } from "./attempts.ts";
import type { z } from "zod";
import { JOB_KINDS, type JobKind, type ParsedPayload } from "./kinds.ts";
import { classify } from "./settle.ts";
import { type JobContext, type JobHandler, Snooze } from "./worker_pool.ts";
import type { DefineJob, RunnableJob } from "./handlers/job.ts";
import { messageSend } from "./handlers/message_send.ts";
import { metaInbound } from "./handlers/meta_inbound.ts";
import { metaStatus } from "./handlers/meta_status.ts";
import { mediaDownload } from "./handlers/media_download.ts";
import { webhookDeliver } from "./handlers/webhook_deliver.ts";
import { socialRefresh } from "./handlers/social_refresh.ts";
import { socialRefreshAll } from "./handlers/social_refresh_all.ts";
import { jobsRescue } from "./handlers/jobs_rescue.ts";
import { jobsPrune } from "./handlers/jobs_prune.ts";

const HANDLERS: { [K in JobKind]: DefineJob<K> } = {
  "message.send": messageSend,
  "meta.inbound": metaInbound,
  "meta.status": metaStatus,
  "media.download": mediaDownload,
  "webhook.deliver": webhookDeliver,
  "social.refresh": socialRefresh,
  "social.refresh_all": socialRefreshAll,
  "jobs.rescue": jobsRescue,
  "jobs.prune": jobsPrune,
};

function classifyText(err: unknown): string {
  const outcome = classify(err);
  return outcome.type === "fail" ? outcome.error : outcome.type;
}

/** True when this failure ends the job: permanent, or on its last attempt (not a lost lease or shutdown). */
export function isFinalFailure(err: unknown, ctx: JobContext): boolean {
  if (ctx.signal.aborted) return false;
  const outcome = classify(err);
  return outcome.type === "fail" &&
    (!outcome.retryable || isLastAttempt(ctx.job));
}

/**
 * The pool's handler for one kind: parses the payload with `schema` (a
 * malformed one is a permanent failure), turns RetryLater into Snooze and
 * runs the final-failure hook on a final failure.
 */
export function jobHandler<P>(
  kind: string,
  schema: z.ZodType<P>,
  definition: RunnableJob<P>,
): JobHandler {
  return async (payload, ctx) => {
    const parsed = schema.safeParse(payload);
    if (!parsed.success) {
      throw new AppError(
        "VALIDATION_ERROR",
        `Cannot run job "${kind}": malformed payload`,
      );
    }
    try {
      await definition.run(parsed.data, ctx);
    } catch (err) {
      if (err instanceof RetryLater) throw new Snooze(err.delayMs, err.message);
      if (!definition.onFinalFailure || !isFinalFailure(err, ctx)) throw err;
      // The outcome is recorded where it belongs (the message is failed): the job is done.
      await definition.onFinalFailure(parsed.data, err, ctx);
      ctx.log.info("Job failed for good; its final outcome is recorded", {
        error: classifyText(err),
      });
    }
  };
}

/** Every job kind the program runs, with its handler. */
export function createJobHandlers(c: Container): Record<JobKind, JobHandler> {
  const out = {} as Record<JobKind, JobHandler>;
  for (const kind of Object.keys(HANDLERS) as JobKind[]) {
    const define = HANDLERS[kind] as DefineJob<typeof kind>;
    const schema = JOB_KINDS[kind].payload as unknown as z.ZodType<
      ParsedPayload<typeof kind>
    >;
    out[kind] = jobHandler(kind, schema, define(c));
  }
  return out;
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
  const { ["webhook.deliver"]: deliver, ...main } = handlers;
  return { main, webhooks: deliver ? { ["webhook.deliver"]: deliver } : {} };
}

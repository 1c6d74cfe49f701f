/**
 * Every job kind's handler, checked against the kinds table (jobs/kinds.ts):
 * a kind without a handler here, or a handler for a kind not there, fails
 * the type check. Each handler gets its payload parsed by its kind's schema,
 * a domain "not now" (RetryLater) becomes the pool's Snooze, and a failure
 * that is final (jobs/attempts.ts) runs the kind's final-failure hook.
 */
import type { Container } from "../container.ts";
import { AppError, coerceError, HoldJob, RetryLater } from "../errors.ts";
import { isLastAttempt } from "./attempts.ts";
import type { z } from "zod";
import { type JobKind, payloadSchema } from "./kinds.ts";
import { classify } from "./settle.ts";
import { isPartMissing } from "../program_parts.ts";
import { type JobContext, type JobHandler, Snooze } from "./worker_pool.ts";
import type { DefineJob, RunnableJob } from "./handlers/job.ts";

/**
 * Each kind's handler module, imported the first time a job of the kind
 * runs (with its payload schema, see kinds.ts), so the program starts
 * without loading them and the domain they call.
 */
const HANDLERS: { [K in JobKind]: () => Promise<DefineJob<K>> } = {
  "message.send": async () =>
    (await import("./handlers/message_send.ts")).messageSend,
  "meta.inbound": async () =>
    (await import("./handlers/meta_inbound.ts")).metaInbound,
  "meta.status": async () =>
    (await import("./handlers/meta_status.ts")).metaStatus,
  "media.download": async () =>
    (await import("./handlers/media_download.ts")).mediaDownload,
  "webhook.deliver": async () =>
    (await import("./handlers/webhook_deliver.ts")).webhookDeliver,
  "templates.sync": async () =>
    (await import("./handlers/templates_sync.ts")).templatesSync,
  "templates.sync_due": async () =>
    (await import("./handlers/templates_sync_due.ts")).templatesSyncDue,
  "template.refresh": async () =>
    (await import("./handlers/template_refresh.ts")).templateRefresh,
  "channel.health": async () =>
    (await import("./handlers/channel_health.ts")).channelHealth,
  "channels.health_all": async () =>
    (await import("./handlers/channels_health_all.ts")).channelsHealthAll,
  "social.refresh": async () =>
    (await import("./handlers/social_refresh.ts")).socialRefresh,
  "social.refresh_all": async () =>
    (await import("./handlers/social_refresh_all.ts")).socialRefreshAll,
  "jobs.rescue": async () =>
    (await import("./handlers/jobs_rescue.ts")).jobsRescue,
  "jobs.prune": async () =>
    (await import("./handlers/jobs_prune.ts")).jobsPrune,
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
      if (err instanceof HoldJob) {
        throw new Snooze(err.delayMs, err.message, err.key);
      }
      if (err instanceof RetryLater) throw new Snooze(err.delayMs, err.message);
      // A module the handler loads on first use (the S3 store) is missing.
      if (isPartMissing(err)) throw unloaded(err);
      if (!definition.onFinalFailure || !isFinalFailure(err, ctx)) throw err;
      // The outcome is recorded where it belongs (the message is failed): the job is done.
      await definition.onFinalFailure(parsed.data, err, ctx);
      ctx.log.info("Job failed for good; its final outcome is recorded", {
        error: classifyText(err),
      });
    }
  };
}

/** Every job kind the program runs, with its handler (loaded on first use). */
export function createJobHandlers(c: Container): Record<JobKind, JobHandler> {
  const out = {} as Record<JobKind, JobHandler>;
  for (const kind of Object.keys(HANDLERS) as JobKind[]) {
    out[kind] = onFirstUse(() => loadHandler(c, kind));
  }
  return out;
}

/**
 * How long a job whose handler, or a module it needs, failed to load waits
 * before it is claimed again (the process needs a restart, see
 * program_parts.ts).
 */
export const UNLOADED_HANDLER_SNOOZE_MS = 60_000;

/** The job goes back without spending an attempt: the fault is the program's. */
function unloaded(err: unknown): Snooze {
  return new Snooze(
    UNLOADED_HANDLER_SNOOZE_MS,
    `A part of the program the job needs cannot be loaded: ${
      coerceError(err).message
    }`,
  );
}

/**
 * Imports a kind's handler and payload schema and builds the handler. A job
 * whose modules cannot be imported goes back without spending an attempt:
 * the fault is the program's, and the job runs once the server is
 * restarted on an intact build. Building it is not the import: a `define`
 * that throws fails the job as any handler error does.
 */
async function loadHandler<K extends JobKind>(
  c: Container,
  kind: K,
): Promise<JobHandler> {
  const load = HANDLERS[kind] as () => Promise<DefineJob<K>>;
  const [schema, define] = await c.parts.load(
    `job handler ${kind}`,
    () => Promise.all([payloadSchema(kind), load()]),
  ).catch((err) => {
    throw unloaded(err);
  });
  return jobHandler(kind, schema, define(c));
}

/** A handler that loads the real one on its first call (again, if that failed) and then calls it directly. */
function onFirstUse(load: () => Promise<JobHandler>): JobHandler {
  let loaded: JobHandler | undefined;
  let loading: Promise<JobHandler> | undefined;
  return (payload, ctx) => {
    if (loaded) return loaded(payload, ctx);
    loading ??= load().then((handler) => loaded = handler, (err) => {
      loading = undefined;
      throw err;
    });
    return loading.then((handler) => handler(payload, ctx));
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
  const { ["webhook.deliver"]: deliver, ...main } = handlers;
  return { main, webhooks: deliver ? { ["webhook.deliver"]: deliver } : {} };
}

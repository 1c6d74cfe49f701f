import type { Container } from "../../container.ts";
import { queueDueSyncs } from "../../domain/templates/template_sync_service.ts";
import type { JobDefinition } from "./job.ts";

/** The cron tick's job: a template sync for every WABA whose last one is older than TEMPLATE_SYNC_INTERVAL. */
export function templatesSyncDue(
  c: Container,
): JobDefinition<"templates.sync_due"> {
  return {
    run: async (_payload, ctx) => {
      const queued = await queueDueSyncs(c, {
        tickKey: ctx.job.uniqueKey ?? ctx.job.id,
        intervalMs: c.config.templateSyncIntervalMs,
      });
      if (queued) ctx.log.info("Queued template syncs", { queued });
    },
  };
}

import type { Container } from "../../container.ts";
import { queueHealthChecks } from "../../domain/channels/channel_health_service.ts";
import type { JobDefinition } from "./job.ts";

/** The hourly tick's job: a health check of every channel. */
export function channelsHealthAll(
  c: Container,
): JobDefinition<"channels.health_all"> {
  return {
    run: async (_payload, ctx) => {
      const queued = await queueHealthChecks(
        c,
        ctx.job.uniqueKey ?? ctx.job.id,
      );
      if (queued) ctx.log.info("Queued health checks", { queued });
    },
  };
}

import type { Container } from "../../container.ts";
import { queueAllRefreshes } from "../../domain/social/refresh_service.ts";
import type { JobDefinition } from "./job.ts";

/** The cron tick's job: queues one refresh per social account. */
export function socialRefreshAll(
  c: Container,
): JobDefinition<"social.refresh_all"> {
  return {
    run: async (_payload, ctx) => {
      const queued = await queueAllRefreshes(
        c,
        ctx.job.uniqueKey ?? ctx.job.id,
      );
      ctx.log.info("Queued social refreshes", { queued });
    },
  };
}

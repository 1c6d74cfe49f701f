import type { Container } from "../../container.ts";
import { pruneAll } from "../maintenance.ts";
import type { JobDefinition } from "./job.ts";

/** Deletes finished jobs and old rows past their retention. */
export function jobsPrune(c: Container): JobDefinition<"jobs.prune"> {
  return {
    run: async (_payload, ctx) => {
      const pruned = await pruneAll(
        c.db,
        c.clock.now(),
        c.config.webhookRetentionDays,
      );
      ctx.log.info("Pruned old rows", { ...pruned });
    },
  };
}

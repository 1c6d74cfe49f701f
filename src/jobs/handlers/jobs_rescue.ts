import type { Container } from "../../container.ts";
import { rescueExpiredLeases } from "../queue.ts";
import type { JobDefinition } from "./job.ts";

/** Hands back running jobs whose lease expired (a dead worker's). */
export function jobsRescue(c: Container): JobDefinition<"jobs.rescue"> {
  return {
    run: async (_payload, ctx) => {
      const rescued = await rescueExpiredLeases(c.db, c.clock.now());
      if (rescued > 0) {
        ctx.log.warn("Rescued jobs with expired leases", { rescued });
      }
    },
  };
}

import type { Container } from "../../container.ts";
import { syncWabaTemplates } from "../../domain/templates/template_sync_service.ts";
import { jobErrorOf } from "../../domain/wabas/waba_call_service.ts";
import type { JobDefinition } from "./job.ts";

/** Syncs a WABA's templates from Meta (all or nothing); a failure names Meta's code. */
export function templatesSync(c: Container): JobDefinition<"templates.sync"> {
  return {
    run: async ({ wabaId }, ctx) => {
      try {
        const summary = await syncWabaTemplates(c, wabaId, {
          mode: "background",
        });
        ctx.log.info("Synced templates from Meta", { ...summary });
      } catch (err) {
        throw jobErrorOf(err);
      }
    },
  };
}

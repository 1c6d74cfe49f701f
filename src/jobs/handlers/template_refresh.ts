import type { Container } from "../../container.ts";
import { refreshTemplate } from "../../domain/templates/template_sync_service.ts";
import { jobErrorOf } from "../../domain/wabas/waba_call_service.ts";
import type { JobDefinition } from "./job.ts";

/** Reads one template again from Meta (after a webhook or a send's template error). */
export function templateRefresh(
  c: Container,
): JobDefinition<"template.refresh"> {
  return {
    run: async (payload, ctx) => {
      try {
        const summary = await refreshTemplate(c, {
          ...payload,
          mode: "background",
        });
        ctx.log.info("Refreshed template from Meta", {
          ...summary,
          name: payload.name,
          metaTemplateId: payload.metaTemplateId,
        });
      } catch (err) {
        throw jobErrorOf(err);
      }
    },
  };
}

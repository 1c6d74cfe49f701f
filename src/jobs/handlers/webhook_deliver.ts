import type { Container } from "../../container.ts";
import { attemptDelivery } from "../../domain/webhooks/attempt_service.ts";
import type { JobDefinition } from "./job.ts";

/** Makes one webhook delivery attempt (its record completes the job in its transaction). */
export function webhookDeliver(c: Container): JobDefinition<"webhook.deliver"> {
  return {
    run: ({ deliveryId }, ctx) =>
      attemptDelivery(c, deliveryId, {
        signal: ctx.signal,
        lease: ctx.job,
        markCompleted: ctx.markCompleted,
      }),
  };
}

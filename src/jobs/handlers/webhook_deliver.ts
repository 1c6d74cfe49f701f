import type { Container } from "../../container.ts";
import { attemptDelivery } from "../../domain/webhooks/attempt_service.ts";
import type { JobDefinition } from "./job.ts";

/** Makes one webhook delivery attempt (it completes its job in its own transaction). */
export function webhookDeliver(c: Container): JobDefinition<"webhook.deliver"> {
  return {
    run: ({ deliveryId }, ctx) =>
      attemptDelivery(c, deliveryId, {
        signal: ctx.signal,
        completeIn: ctx.completeIn,
      }),
  };
}

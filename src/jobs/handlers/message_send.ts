import type { Container } from "../../container.ts";
import {
  deliverMessage,
  failUndeliverable,
} from "../../domain/messages/delivery_service.ts";
import type { JobDefinition } from "./job.ts";

/**
 * Sends one queued message upstream (the record of an accepted send
 * completes the job in its transaction); on its final failure the message
 * is marked failed.
 */
export function messageSend(c: Container): JobDefinition<"message.send"> {
  return {
    run: ({ messageId }, ctx) =>
      deliverMessage(c, messageId, {
        signal: ctx.signal,
        stopping: ctx.stopping,
        lease: ctx.job,
        markCompleted: ctx.markCompleted,
        heldSince: ctx.job.heldSince,
      }),
    onFinalFailure: ({ messageId }, error) =>
      failUndeliverable(c, messageId, error),
  };
}

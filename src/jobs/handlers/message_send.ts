import type { Container } from "../../container.ts";
import {
  deliverMessage,
  failUndeliverable,
} from "../../domain/messages/delivery_service.ts";
import type { JobDefinition } from "./job.ts";

/** Sends one queued message upstream; on its final failure the message is marked failed. */
export function messageSend(c: Container): JobDefinition<"message.send"> {
  return {
    run: ({ messageId }, ctx) =>
      deliverMessage(c, messageId, { signal: ctx.signal }),
    onFinalFailure: ({ messageId }, error) =>
      failUndeliverable(c, messageId, error),
  };
}

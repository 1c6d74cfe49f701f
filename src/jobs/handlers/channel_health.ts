import type { Container } from "../../container.ts";
import { refreshChannelHealth } from "../../domain/channels/channel_health_service.ts";
import { jobErrorOf } from "../../domain/wabas/waba_call_service.ts";
import type { JobDefinition } from "./job.ts";

/** Reads a channel's number from Meta: quality, throughput, limit, status. */
export function channelHealth(c: Container): JobDefinition<"channel.health"> {
  return {
    run: async ({ channelId }) => {
      try {
        await refreshChannelHealth(c, channelId, { mode: "background" });
      } catch (err) {
        throw jobErrorOf(err);
      }
    },
  };
}

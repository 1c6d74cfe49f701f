import type { Container } from "../../container.ts";
import { refreshSocialAccount } from "../../domain/social/refresh_service.ts";
import type { JobDefinition } from "./job.ts";

/** Refreshes one social account; a spent quota snoozes it to the next window, its place saved. */
export function socialRefresh(c: Container): JobDefinition<"social.refresh"> {
  return {
    run: ({ socialAccountId }, ctx) =>
      refreshSocialAccount(c, socialAccountId, { signal: ctx.signal }),
  };
}

import type { Container } from "../../container.ts";
import { retryUnmatchedStatus } from "../../domain/inbound/unmatched_status_service.ts";
import type { JobDefinition } from "./job.ts";

/** Tries one status report that matched no message again. */
export function metaStatus(c: Container): JobDefinition<"meta.status"> {
  return { run: (at) => retryUnmatchedStatus(c, at) };
}

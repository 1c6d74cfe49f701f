import type { Container } from "../../container.ts";
import { processInboundPayload } from "../../domain/inbound/inbound_service.ts";
import type { JobDefinition } from "./job.ts";

/** Applies one stored Meta webhook payload. */
export function metaInbound(c: Container): JobDefinition<"meta.inbound"> {
  return { run: ({ payloadId }) => processInboundPayload(c, payloadId) };
}

import type { Container } from "../../container.ts";
import {
  downloadInboundMedia,
  failInboundMedia,
} from "../../domain/media/media_service.ts";
import type { JobDefinition } from "./job.ts";

/** Copies one inbound media file into the blob store; on its final failure the media is marked failed. */
export function mediaDownload(c: Container): JobDefinition<"media.download"> {
  return {
    run: ({ mediaId }, ctx) =>
      downloadInboundMedia(c, mediaId, { signal: ctx.signal }),
    onFinalFailure: ({ mediaId }, error) => failInboundMedia(c, mediaId, error),
  };
}

import { Hono } from "hono";
import type { Container } from "../../container.ts";
import type { AppEnv } from "../env.ts";
import type { OpenedMedia } from "../../domain/media/media_service.ts";

/** The media domain (and the phone metadata its channel lookups load), imported on the first download. */
const media = () => import("../../domain/media/media_service.ts");

/** GET /media/download/:id?expires&signature: the bytes behind a URL this server signed (on PUBLIC_BASE_URL). */
export function mediaDownloadRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const service = container.parts.once("media download", media);
  app.get("/media/download/:id", async (c) => {
    const { openSignedMedia } = await service();
    const file = await openSignedMedia(container, {
      mediaId: c.req.param("id"),
      expires: c.req.query("expires"),
      signature: c.req.query("signature"),
    });
    return mediaResponse(file, { "cache-control": "private, max-age=60" });
  });
  return app;
}

/**
 * A stored media file's response, streamed from the store (a large file is
 * never held in memory). The type comes from upstream data: the browser
 * may not guess another, and anything but a raster image, audio or video is
 * a download under `Content-Security-Policy: sandbox`, so a customer's SVG
 * or HTML never runs as this origin.
 */
export function mediaResponse(
  file: OpenedMedia,
  headers: Record<string, string>,
): Response {
  return new Response(file.body, {
    headers: {
      "content-type": file.mimeType,
      "content-length": String(file.size),
      "content-disposition": file.disposition,
      "x-content-type-options": "nosniff",
      ...headers,
      ...(file.sandbox ? { "content-security-policy": "sandbox" } : {}),
    },
  });
}

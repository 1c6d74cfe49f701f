import { type OpenAPIHono, z } from "@hono/zod-openapi";
import { Hono } from "hono";
import type { Container } from "../../container.ts";
import {
  getMediaDescriptor,
  getMediaDescriptorByKey,
  openSignedMedia,
} from "../../domain/media/media_service.ts";
import type { AppEnv } from "../env.ts";
import {
  COMMON_ERRORS,
  defineRoute,
  envelope,
  IdParam,
  newRouter,
  NOT_FOUND_ERROR,
} from "../openapi.ts";
import { ok } from "../respond.ts";

const MediaDescriptorSchema = z.object({
  id: z.uuid(),
  url: z.string().openapi({ description: "Short-lived signed download URL" }),
  expiresIn: z.number().int().openapi({
    description: "Seconds the URL stays valid",
  }),
  mimeType: z.string(),
  fileName: z.string(),
}).openapi("MediaDescriptor");

const getRoute = defineRoute("media:read", {
  method: "get",
  path: "/media/{id}",
  tags: ["Media"],
  summary: "A signed download URL for inbound media",
  request: { params: IdParam },
  responses: {
    200: envelope(MediaDescriptorSchema, "Media descriptor"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const byKeyRoute = defineRoute("media:read", {
  method: "get",
  path: "/media/by-key",
  tags: ["Media"],
  summary: "Same, by object-storage key (must begin with the account id)",
  request: { query: z.strictObject({ key: z.string().min(1).max(512) }) },
  responses: {
    200: envelope(MediaDescriptorSchema, "Media descriptor"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

export function mediaRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  // by-key first: "/media/by-key" must not be read as an id.
  app.openapi(byKeyRoute, async (c) => {
    const { key } = c.req.valid("query");
    return ok(
      c,
      await getMediaDescriptorByKey(
        container,
        c.get("principal").accountId,
        key,
      ),
    );
  });
  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid("param");
    return ok(
      c,
      await getMediaDescriptor(
        container,
        c.get("principal").accountId,
        id,
      ),
    );
  });
  return app;
}

/** GET /media/download/:id?expires&signature: the bytes behind a URL this server signed (on PUBLIC_BASE_URL). */
export function mediaDownloadRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/media/download/:id", async (c) => {
    const file = await openSignedMedia(container, {
      mediaId: c.req.param("id"),
      expires: c.req.query("expires"),
      signature: c.req.query("signature"),
    });
    // Streamed from the store: a large file is never held in memory.
    return new Response(file.body, {
      headers: {
        "content-type": file.mimeType,
        "content-length": String(file.size),
        "content-disposition": file.disposition,
        // The type comes from upstream data: never let a browser guess another.
        "x-content-type-options": "nosniff",
        "cache-control": "private, max-age=60",
      },
    });
  });
  return app;
}

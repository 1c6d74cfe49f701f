import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import {
  getMediaDescriptor,
  getMediaDescriptorByKey,
} from "../../domain/media/media_service.ts";
import { viewerOf } from "../../domain/conversations/conversation.ts";
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
        viewerOf(c.get("principal")),
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
        viewerOf(c.get("principal")),
        id,
      ),
    );
  });
  return app;
}

import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import { listEvents } from "../../domain/events/event_service.ts";
import type { AppEnv } from "../env.ts";
import {
  COMMON_ERRORS,
  cursorEnvelope,
  defineRoute,
  newRouter,
} from "../openapi.ts";
import { ok } from "../respond.ts";
import { EventListQuery, FeedEventSchema } from "../schemas/webhook_schemas.ts";

const listEventsRoute = defineRoute("webhooks:read", {
  method: "get",
  path: "/events",
  tags: ["Webhooks"],
  summary:
    "Catch-up feed: every event oldest first, with the webhook's data; meta.cursor is where to read on from",
  request: { query: EventListQuery },
  responses: {
    200: cursorEnvelope(
      FeedEventSchema,
      "Events after the cursor; keep meta.cursor and ask again later for newer ones",
    ),
    ...COMMON_ERRORS,
  },
});

export function eventRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.openapi(listEventsRoute, async (c) => {
    const q = c.req.valid("query");
    const types = q.type?.split(",").map((t) => t.trim()).filter(Boolean);
    const page = await listEvents(container, {
      accountId: c.get("principal").accountId,
      cursor: q.cursor,
      limit: q.limit,
      ...(types?.length ? { types } : {}),
    });
    return ok(c, page.items, {
      meta: { cursor: page.cursor, hasMore: page.hasMore },
    });
  });
  return app;
}

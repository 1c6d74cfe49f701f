// The panel-side resolve (spec: GET /api/v1/conversations/resolve): the same
// query, credentials, visibility and result as /api/v2/conversations/resolve,
// answered as `{ data }` without `meta`, like the other panel endpoints.
import { Hono } from "hono";
import type { Container } from "../../container.ts";
import { viewerOf } from "../../domain/conversations/conversation.ts";
import { resolveConversation } from "../../domain/conversations/conversation_service.ts";
import { requireScope } from "../auth.ts";
import type { AppEnv } from "../env.ts";
import { parseOrRefuse } from "../openapi.ts";
import { ResolveQuery } from "../schemas/conversation_schemas.ts";

export function panelConversationRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(
    "/conversations/resolve",
    requireScope("conversations:read"),
    async (c) => {
      const query = parseOrRefuse("query", ResolveQuery, c.req.query());
      const result = await resolveConversation(container, {
        viewer: viewerOf(c.get("principal")),
        ...query,
      });
      return c.json({ data: result });
    },
  );
  return app;
}

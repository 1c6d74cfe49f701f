// GET /api/v1/agents: the account's active agents (id, name, visibility),
// who a conversation can be assigned to; the panel's "Assign" control reads
// it. Answered as `{ data }` like the other panel endpoints.
import { Hono } from "hono";
import type { Container } from "../../container.ts";
import { listActiveAgents } from "../../domain/accounts/account_service.ts";
import { requireScope } from "../auth.ts";
import type { AppEnv } from "../env.ts";
import { refuseQuery } from "../openapi.ts";

export function panelAgentRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get(
    "/agents",
    requireScope("conversations:read"),
    refuseQuery,
    async (c) => {
      const agents = await listActiveAgents(
        container,
        c.get("principal").accountId,
      );
      return c.json({ data: agents });
    },
  );
  return app;
}

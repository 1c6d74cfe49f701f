// The panel-side conversation endpoints under /api/v1 (answered as `{ data }`
// without `meta`, like the other panel endpoints), with the same credentials
// and visibility as /api/v2:
// - GET /conversations/resolve: the spec's panel-side resolve, the same
//   query and result as /api/v2/conversations/resolve;
// - GET /conversations: the inbox, by last activity, with the filters the
//   panel needs (status, mine, unassigned, unread, window closing) and a
//   search by name, phone or e-mail; `{ data, cursor, hasMore }`;
// - GET /conversations/:id/messages: a thread's newest messages first page
//   (oldest first within it), `cursor` paging back; `{ data, cursor, hasMore }`.
import { Hono } from "hono";
import { z } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import { viewerOf } from "../../domain/conversations/conversation.ts";
import {
  listInbox,
  listLatestMessages,
  resolveConversation,
} from "../../domain/conversations/conversation_service.ts";
import { AppError } from "../../errors.ts";
import { requireScope } from "../auth.ts";
import type { AppEnv } from "../env.ts";
import { IdParam, parseOrRefuse } from "../openapi.ts";
import {
  ConversationStatusSchema,
  ResolveQuery,
  toConversationResponse,
} from "../schemas/conversation_schemas.ts";

/** "Closing soon": an open window that closes within 2 hours. */
export const WINDOW_CLOSING_MS = 2 * 60 * 60 * 1000;

const flag = z.enum(["true", "false"]).transform((v) => v === "true");

const InboxQuery = z.strictObject({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
  status: ConversationStatusSchema.optional(),
  /** `me` (the calling agent), `none` (unassigned) or an agent id. */
  assignee: z.union([z.enum(["me", "none"]), z.uuid()]).optional(),
  unread: flag.optional(),
  windowClosing: flag.optional(),
  search: z.string().trim().min(1).max(100).optional(),
});

const LatestQuery = z.strictObject({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

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
  app.get("/conversations", requireScope("conversations:read"), async (c) => {
    const q = parseOrRefuse("query", InboxQuery, c.req.query());
    const principal = c.get("principal");
    let assignedTo: string | null | undefined;
    if (q.assignee === "me") {
      if (principal.kind !== "agent") {
        throw new AppError(
          "VALIDATION_ERROR",
          'Invalid query parameter "assignee": "me" needs an agent\'s credential (user token or panel session)',
        );
      }
      assignedTo = principal.agentId;
    } else if (q.assignee === "none") assignedTo = null;
    else assignedTo = q.assignee;
    const page = await listInbox(container, {
      viewer: viewerOf(principal),
      limit: q.limit,
      cursor: q.cursor,
      status: q.status,
      assignedTo,
      unread: q.unread,
      windowClosingWithinMs: q.windowClosing ? WINDOW_CLOSING_MS : undefined,
      search: q.search,
    });
    return c.json({
      data: page.items.map(toConversationResponse),
      cursor: page.cursor,
      hasMore: page.hasMore,
    });
  });
  app.get(
    "/conversations/:id/messages",
    requireScope("conversations:read"),
    async (c) => {
      const { id } = parseOrRefuse("param", IdParam, { id: c.req.param("id") });
      const q = parseOrRefuse("query", LatestQuery, c.req.query());
      const page = await listLatestMessages(container, {
        viewer: viewerOf(c.get("principal")),
        conversationId: id,
        limit: q.limit,
        before: q.cursor,
      });
      return c.json({
        data: page.items,
        cursor: page.cursor,
        hasMore: page.hasMore,
      });
    },
  );
  return app;
}

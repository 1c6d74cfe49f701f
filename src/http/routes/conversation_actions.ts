import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import {
  markConversationRead,
  setTyping,
} from "../../domain/messages/read_service.ts";
import { viewerOf } from "../../domain/conversations/conversation.ts";
import type { AppEnv } from "../env.ts";
import {
  COMMON_ERRORS,
  defineRoute,
  envelope,
  IdParam,
  jsonBody,
  newRouter,
  NOT_FOUND_ERROR,
} from "../openapi.ts";
import { ok } from "../respond.ts";
import {
  ReadResultSchema,
  TypingRequest,
  TypingResultSchema,
} from "../schemas/send_schemas.ts";

const readRoute = defineRoute("conversations:write", {
  method: "post",
  path: "/conversations/{id}/read",
  tags: ["Conversations"],
  summary: "Reset unreadCount and send a read receipt upstream",
  request: { params: IdParam },
  responses: {
    200: envelope(ReadResultSchema, "Read receipt result"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const typingRoute = defineRoute("conversations:write", {
  method: "post",
  path: "/conversations/{id}/typing",
  tags: ["Conversations"],
  summary: "Show the typing indicator to the contact",
  request: { params: IdParam, body: jsonBody(TypingRequest) },
  responses: {
    200: envelope(TypingResultSchema, "Typing indicator result"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

/** Read receipts and typing: the conversation actions that call the upstream. */
export function conversationActionRoutes(
  container: Container,
): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.openapi(readRoute, async (c) => {
    const { id } = c.req.valid("param");
    return ok(
      c,
      await markConversationRead(container, viewerOf(c.get("principal")), id),
    );
  });
  app.openapi(typingRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { status } = c.req.valid("json");
    return ok(
      c,
      await setTyping(container, viewerOf(c.get("principal")), id, status),
    );
  });
  return app;
}

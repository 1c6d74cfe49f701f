import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import { viewerOf } from "../../domain/conversations/conversation.ts";
import * as service from "../../domain/conversations/conversation_service.ts";
import type { AppEnv } from "../env.ts";
import {
  COMMON_ERRORS,
  cursorEnvelope,
  CursorQuery,
  defineRoute,
  envelope,
  IdParam,
  jsonBody,
  newRouter,
  NOT_FOUND_ERROR,
  UNPROCESSABLE_ERROR,
} from "../openapi.ts";
import { ok } from "../respond.ts";
import {
  ConversationSchema,
  ListConversationsQuery,
  PhoneParam,
  ResolveQuery,
  ResolveResultSchema,
  toConversationResponse,
  UpdateConversationBody,
} from "../schemas/conversation_schemas.ts";
import { MessageSchema } from "../schemas/message_schemas.ts";

const TAGS = ["Conversations"];
const VISIBILITY =
  " User tokens of agents with visibility `assigned` see only conversations assigned to them.";

const listRoute = defineRoute("conversations:read", {
  method: "get",
  path: "/conversations",
  tags: TAGS,
  summary: "List conversations, newest first",
  description: "Cursor pagination on creation time." + VISIBILITY,
  request: { query: ListConversationsQuery },
  responses: {
    200: cursorEnvelope(ConversationSchema, "A page of conversations"),
    ...COMMON_ERRORS,
  },
});

const byPhoneRoute = defineRoute("conversations:read", {
  method: "get",
  path: "/conversations/by-phone/{phone}",
  tags: TAGS,
  summary: "The most recent conversation of a phone number",
  description:
    "Matches every spelling of the number (see the parameter); the most recent by last message wins." +
    VISIBILITY,
  request: { params: PhoneParam },
  responses: {
    200: envelope(ConversationSchema, "The conversation"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const resolveRoute = defineRoute("conversations:read", {
  method: "get",
  path: "/conversations/resolve",
  tags: TAGS,
  summary: "Find a conversation by phone, e-mail or Instagram user name",
  description:
    "Matches contacts by any of the identifiers given (at least one of phone, email, instagram)." +
    VISIBILITY,
  request: { query: ResolveQuery },
  responses: {
    200: envelope(ResolveResultSchema, "The best match and the others"),
    ...COMMON_ERRORS,
  },
});

const getRoute = defineRoute("conversations:read", {
  method: "get",
  path: "/conversations/{id}",
  tags: TAGS,
  summary: "One conversation",
  description: VISIBILITY.trim(),
  request: { params: IdParam },
  responses: {
    200: envelope(ConversationSchema, "The conversation"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const updateRoute = defineRoute("conversations:write", {
  method: "patch",
  path: "/conversations/{id}",
  tags: TAGS,
  summary: "Change a conversation's status or assignee",
  request: { params: IdParam, body: jsonBody(UpdateConversationBody) },
  responses: {
    200: envelope(ConversationSchema, "The updated conversation"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
    ...UNPROCESSABLE_ERROR,
  },
});

const messagesRoute = defineRoute("conversations:read", {
  method: "get",
  path: "/conversations/{id}/messages",
  tags: TAGS,
  summary: "A conversation's messages, oldest first",
  description: "Cursor pagination." + VISIBILITY,
  request: { params: IdParam, query: CursorQuery },
  responses: {
    200: cursorEnvelope(MessageSchema, "A page of messages"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const contactConversationsRoute = defineRoute("contacts:read", {
  method: "get",
  path: "/contacts/{id}/conversations",
  tags: ["Contacts"],
  summary: "A contact's conversations, newest first",
  request: { params: IdParam, query: CursorQuery },
  responses: {
    200: cursorEnvelope(ConversationSchema, "A page of conversations"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

function pageMeta(page: { cursor: string | null; hasMore: boolean }) {
  return { meta: { cursor: page.cursor, hasMore: page.hasMore } };
}

export function conversationRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  // Static paths before /conversations/{id}, which would reject them as non-UUID ids.
  app.openapi(listRoute, async (c) => {
    const query = c.req.valid("query");
    const page = await service.listConversations(container, {
      viewer: viewerOf(c.get("principal")),
      ...query,
    });
    return ok(c, page.items.map(toConversationResponse), pageMeta(page));
  });
  app.openapi(byPhoneRoute, async (c) => {
    const found = await service.findConversationByPhone(container, {
      viewer: viewerOf(c.get("principal")),
      phone: c.req.valid("param").phone,
    });
    return ok(c, toConversationResponse(found));
  });
  app.openapi(resolveRoute, async (c) => {
    const result = await service.resolveConversation(container, {
      viewer: viewerOf(c.get("principal")),
      ...c.req.valid("query"),
    });
    return ok(c, result);
  });
  app.openapi(getRoute, async (c) => {
    const found = await service.getConversation(container, {
      viewer: viewerOf(c.get("principal")),
      id: c.req.valid("param").id,
    });
    return ok(c, toConversationResponse(found));
  });
  app.openapi(updateRoute, async (c) => {
    const updated = await service.updateConversation(container, {
      viewer: viewerOf(c.get("principal")),
      id: c.req.valid("param").id,
      ...c.req.valid("json"),
    });
    return ok(c, toConversationResponse(updated));
  });
  app.openapi(messagesRoute, async (c) => {
    const page = await service.listConversationMessages(container, {
      viewer: viewerOf(c.get("principal")),
      conversationId: c.req.valid("param").id,
      ...c.req.valid("query"),
    });
    return ok(c, page.items, pageMeta(page));
  });
  app.openapi(contactConversationsRoute, async (c) => {
    const page = await service.listContactConversations(container, {
      viewer: viewerOf(c.get("principal")),
      contactId: c.req.valid("param").id,
      ...c.req.valid("query"),
    });
    return ok(c, page.items.map(toConversationResponse), pageMeta(page));
  });
  return app;
}

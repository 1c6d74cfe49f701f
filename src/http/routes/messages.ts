import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Container } from "../../container.ts";
import { AppError } from "../../errors.ts";
import {
  sendBatch,
  sendMessage,
} from "../../domain/messages/send_message_service.ts";
import { getMessage } from "../../domain/messages/message_service.ts";
import { markMessageRead } from "../../domain/messages/read_service.ts";
import { viewerOf } from "../../domain/conversations/conversation.ts";
import type { AppEnv } from "../env.ts";
import {
  COMMON_ERRORS,
  CONFLICT_ERROR,
  defineRoute,
  envelope,
  IdParam,
  jsonBody,
  newRouter,
  NOT_FOUND_ERROR,
  UNPROCESSABLE_ERROR,
} from "../openapi.ts";
import { ok } from "../respond.ts";
import { MessageSchema } from "../schemas/message_schemas.ts";
import {
  AcceptedMessageSchema,
  BatchRequest,
  BatchResultSchema,
  ReadResultSchema,
  SendMessageRequest,
} from "../schemas/send_schemas.ts";
import { z } from "@hono/zod-openapi";

const sendRoute = defineRoute("messages:write", {
  method: "post",
  path: "/messages",
  tags: ["Messages"],
  summary: "Send one message (queued; delivery is asynchronous)",
  request: {
    // Documented by reference, so the router adds no validator: the domain
    // parses the body once, naming the spec's codes (sendMessage).
    body: {
      content: {
        "application/json": {
          schema: { $ref: "#/components/schemas/SendMessageRequest" },
        },
      },
      required: true,
    },
  },
  // Documented as a plain parameter, so the router adds no header validator
  // (an optional string header cannot fail one): read by idempotencyKey().
  parameters: [{
    name: "idempotency-key",
    in: "header",
    required: false,
    schema: { type: "string" },
  }],
  responses: {
    201: envelope(AcceptedMessageSchema, "Accepted and queued"),
    ...COMMON_ERRORS,
    ...CONFLICT_ERROR,
    ...UNPROCESSABLE_ERROR,
  },
});

const batchRoute = defineRoute("messages:write", {
  method: "post",
  path: "/messages/batch",
  tags: ["Messages"],
  summary: "Send up to 100 messages at campaign priority",
  request: { body: jsonBody(BatchRequest) },
  responses: {
    202: envelope(BatchResultSchema, "Each item queued, skipped or failed"),
    ...COMMON_ERRORS,
    ...CONFLICT_ERROR,
  },
}, { agents: false });

const getRoute = defineRoute("messages:read", {
  method: "get",
  path: "/messages/{id}",
  tags: ["Messages"],
  summary: "One message with its delivery status",
  request: { params: IdParam },
  responses: {
    200: envelope(MessageSchema, "The message"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const readRoute = defineRoute("conversations:write", {
  method: "post",
  path: "/messages/{waMessageId}/read",
  tags: ["Messages"],
  summary: "Mark an inbound message as read by its upstream id",
  request: {
    params: z.object({
      waMessageId: z.string().min(1).max(128).openapi({
        param: { name: "waMessageId", in: "path" },
      }),
    }),
  },
  responses: {
    200: envelope(ReadResultSchema, "Read receipt result"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

function idempotencyKey(c: Context<AppEnv>): string | undefined {
  return c.req.header("idempotency-key") ?? undefined;
}

/** The JSON body, or undefined when there is none; a body that is not JSON is 400. */
async function jsonOf(c: Context<AppEnv>): Promise<unknown> {
  const text = await c.req.text();
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new AppError(
      "VALIDATION_ERROR",
      "Cannot parse request body: it is not valid JSON",
    );
  }
}

export function messageRoutes(container: Container): OpenAPIHono<AppEnv> {
  // A batch's items (and the channel they fall back on) are parsed one by
  // one in the domain, so one bad item fails alone.
  const app = newRouter({
    parsedLater: ["messages", "defaultPhoneNumberId"],
  });
  app.openAPIRegistry.register("SendMessageRequest", SendMessageRequest);
  app.openapi(sendRoute, async (c) => {
    const principal = c.get("principal");
    const result = await sendMessage(container, {
      accountId: principal.accountId,
      idempotencyKey: idempotencyKey(c),
      body: await jsonOf(c),
      ...(principal.kind === "agent" && {
        agent: { id: principal.agentId, visibility: principal.visibility },
      }),
    });
    if (result.replayed) c.header("Idempotent-Replayed", "true");
    return ok(c, result.data, { status: 201 });
  });
  app.openapi(batchRoute, async (c) => {
    const result = await sendBatch(container, {
      accountId: c.get("principal").accountId,
      idempotencyKey: idempotencyKey(c),
      body: c.req.valid("json"),
    });
    if (result.replayed) c.header("Idempotent-Replayed", "true");
    return ok(c, result.data, { status: 202 });
  });
  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid("param");
    return ok(c, await getMessage(container, viewerOf(c.get("principal")), id));
  });
  app.openapi(readRoute, async (c) => {
    const { waMessageId } = c.req.valid("param");
    return ok(
      c,
      await markMessageRead(
        container,
        viewerOf(c.get("principal")),
        waMessageId,
      ),
    );
  });
  return app;
}

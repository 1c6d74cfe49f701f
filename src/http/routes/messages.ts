import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { Container } from "../../container.ts";
import { AppError } from "../../errors.ts";
import { runIdempotent } from "../../domain/idempotency/idempotency_service.ts";
import { parseSendMessage } from "../../domain/messages/outbound.ts";
import {
  acceptBatch,
  acceptMessage,
} from "../../domain/messages/send_service.ts";
import { getMessage } from "../../domain/messages/message_service.ts";
import { markMessageRead } from "../../domain/messages/read_service.ts";
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
  validationError,
  type ZodIssueLike,
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
    body: jsonBody(SendMessageRequest),
    headers: z.object({ "idempotency-key": z.string().optional() }),
  },
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
});

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

export function messageRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.openapi(
    sendRoute,
    async (c) => {
      const input = c.req.valid("json");
      const accountId = c.get("principal").accountId;
      const result = await runIdempotent(container, {
        accountId,
        key: idempotencyKey(c),
        route: "POST /messages",
        body: input,
      }, async (trx) => {
        const { clientRef: _ref, ...data } = await acceptMessage(
          trx,
          container,
          accountId,
          input,
        );
        return { status: 201, data };
      });
      if (result.replayed) c.header("Idempotent-Replayed", "true");
      else container.jobs.notify();
      return ok(c, result.data, { status: result.status as 201 });
    },
    // Typed as never: it returns nothing on success and throws otherwise.
    (async (
      result: {
        success: boolean;
        target?: string;
        error?: { issues: ZodIssueLike[] };
      },
      c: Context<AppEnv>,
    ) => {
      if (result.success) return;
      if (result.target !== "json") {
        throw validationError(result.target ?? "", result.error?.issues ?? []);
      }
      // Re-read the body to name the problem with the spec's codes.
      const raw = await c.req.json().catch(() => undefined);
      const parsed = parseSendMessage(raw);
      if (!parsed.ok) {
        throw new AppError(parsed.problem.code, parsed.problem.message, {
          details: parsed.problem.details,
        });
      }
      throw new AppError("VALIDATION_ERROR", "Invalid request body");
    }) as never,
  );
  app.openapi(batchRoute, async (c) => {
    const input = c.req.valid("json");
    const accountId = c.get("principal").accountId;
    const result = await runIdempotent(container, {
      accountId,
      key: idempotencyKey(c),
      route: "POST /messages/batch",
      body: input,
    }, async (trx) => ({
      status: 202,
      data: await acceptBatch(trx, container, accountId, input),
    }));
    if (result.replayed) c.header("Idempotent-Replayed", "true");
    else container.jobs.notify();
    return ok(c, result.data, { status: 202 });
  });
  app.openapi(getRoute, async (c) => {
    const { id } = c.req.valid("param");
    return ok(c, await getMessage(container, c.get("principal").accountId, id));
  });
  app.openapi(readRoute, async (c) => {
    const { waMessageId } = c.req.valid("param");
    return ok(
      c,
      await markMessageRead(
        container,
        c.get("principal").accountId,
        waMessageId,
      ),
    );
  });
  return app;
}

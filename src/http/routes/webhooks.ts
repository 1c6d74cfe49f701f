import { type OpenAPIHono, z } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import {
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhooks,
  rotateWebhookSecret,
  updateWebhook,
} from "../../domain/webhooks/webhook_service.ts";
import {
  listDeliveries,
  replayDelivery,
  testWebhook,
} from "../../domain/webhooks/delivery_log_service.ts";
import type { AppEnv } from "../env.ts";
import {
  COMMON_ERRORS,
  CONFLICT_ERROR,
  cursorEnvelope,
  defineRoute,
  envelope,
  GONE_ERROR,
  IdParam,
  jsonBody,
  newRouter,
  NOT_FOUND_ERROR,
  UNPROCESSABLE_ERROR,
} from "../openapi.ts";
import { ok } from "../respond.ts";
import {
  CreateWebhookBody,
  DeletedSchema,
  DeliveryListQuery,
  DeliveryParams,
  DeliverySchema,
  TestResultSchema,
  toWebhookResponse,
  UpdateWebhookBody,
  WebhookSchema,
  WebhookWithSecretSchema,
} from "../schemas/webhook_schemas.ts";

const tags = ["Webhooks"];

const listRoute = defineRoute("webhooks:read", {
  method: "get",
  path: "/webhooks",
  tags,
  summary: "The account's webhook subscriptions, oldest first",
  responses: {
    200: envelope(z.array(WebhookSchema), "Every subscription"),
    ...COMMON_ERRORS,
  },
});

const createRouteDef = defineRoute("webhooks:write", {
  method: "post",
  path: "/webhooks",
  tags,
  summary: "Subscribe a URL to events; the secret is shown only in this answer",
  request: { body: jsonBody(CreateWebhookBody) },
  responses: {
    201: envelope(WebhookWithSecretSchema, "The new subscription"),
    ...COMMON_ERRORS,
    ...UNPROCESSABLE_ERROR,
  },
});

const getRoute = defineRoute("webhooks:read", {
  method: "get",
  path: "/webhooks/{id}",
  tags,
  summary: "One subscription (header values masked, no secret)",
  request: { params: IdParam },
  responses: {
    200: envelope(WebhookSchema, "The subscription"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const updateRoute = defineRoute("webhooks:write", {
  method: "patch",
  path: "/webhooks/{id}",
  tags,
  summary: "Change only the given fields",
  request: { params: IdParam, body: jsonBody(UpdateWebhookBody) },
  responses: {
    200: envelope(WebhookSchema, "The updated subscription"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const deleteRouteDef = defineRoute("webhooks:write", {
  method: "delete",
  path: "/webhooks/{id}",
  tags,
  summary: "Delete a subscription, its delivery log and its queued attempts",
  request: { params: IdParam },
  responses: {
    200: envelope(DeletedSchema, "Deleted"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const testRoute = defineRoute("webhooks:write", {
  method: "post",
  path: "/webhooks/{id}/test",
  tags,
  summary:
    "Queue a synthetic message.received (sent once, logged, counters untouched)",
  request: { params: IdParam },
  responses: {
    202: envelope(TestResultSchema, "The queued test and its exact envelope"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const deliveriesRoute = defineRoute("webhooks:read", {
  method: "get",
  path: "/webhooks/{id}/deliveries",
  tags,
  summary: "The delivery log: one row per attempt, newest first",
  request: { params: IdParam, query: DeliveryListQuery },
  responses: {
    200: cursorEnvelope(DeliverySchema, "One page of attempts"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const rotateRoute = defineRoute("webhooks:write", {
  method: "post",
  path: "/webhooks/{id}/rotate-secret",
  tags,
  summary:
    "Replace the secret; the old one stops at once (queued retries are signed with the new one)",
  request: { params: IdParam },
  responses: {
    200: envelope(WebhookWithSecretSchema, "The subscription and new secret"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const replayRoute = defineRoute("webhooks:write", {
  method: "post",
  path: "/webhooks/{id}/replay/{deliveryId}",
  tags,
  summary: "Queue the event of a logged delivery again (same eventId)",
  request: { params: DeliveryParams },
  responses: {
    202: envelope(DeliverySchema, "The queued attempt"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
    ...CONFLICT_ERROR,
    ...GONE_ERROR,
  },
});

export function webhookRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  const ref = (accountId: string, id: string) => ({ accountId, id });
  app.openapi(listRoute, async (c) => {
    const hooks = await listWebhooks(container, c.get("principal").accountId);
    return ok(c, hooks.map(toWebhookResponse));
  });
  app.openapi(createRouteDef, async (c) => {
    const { webhook, secret } = await createWebhook(
      container,
      c.get("principal").accountId,
      c.req.valid("json"),
    );
    return ok(c, { ...toWebhookResponse(webhook), secret }, { status: 201 });
  });
  app.openapi(getRoute, async (c) => {
    const hook = await getWebhook(
      container,
      ref(c.get("principal").accountId, c.req.valid("param").id),
    );
    return ok(c, toWebhookResponse(hook));
  });
  app.openapi(updateRoute, async (c) => {
    const hook = await updateWebhook(
      container,
      ref(c.get("principal").accountId, c.req.valid("param").id),
      c.req.valid("json"),
    );
    return ok(c, toWebhookResponse(hook));
  });
  app.openapi(deleteRouteDef, async (c) => {
    return ok(
      c,
      await deleteWebhook(
        container,
        ref(c.get("principal").accountId, c.req.valid("param").id),
      ),
    );
  });
  app.openapi(testRoute, async (c) => {
    const result = await testWebhook(
      container,
      ref(c.get("principal").accountId, c.req.valid("param").id),
    );
    return ok(c, result, { status: 202 });
  });
  app.openapi(deliveriesRoute, async (c) => {
    const q = c.req.valid("query");
    const page = await listDeliveries(container, {
      ...q,
      accountId: c.get("principal").accountId,
      id: c.req.valid("param").id,
    });
    return ok(c, page.items, {
      meta: { cursor: page.cursor, hasMore: page.hasMore },
    });
  });
  app.openapi(rotateRoute, async (c) => {
    const { webhook, secret } = await rotateWebhookSecret(
      container,
      ref(c.get("principal").accountId, c.req.valid("param").id),
    );
    return ok(c, { ...toWebhookResponse(webhook), secret });
  });
  app.openapi(replayRoute, async (c) => {
    const { id, deliveryId } = c.req.valid("param");
    const delivery = await replayDelivery(container, {
      accountId: c.get("principal").accountId,
      id,
      deliveryId,
    });
    return ok(c, delivery, { status: 202 });
  });
  return app;
}

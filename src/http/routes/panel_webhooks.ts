// The panel-side aliases of the subscription API (spec: POST and PATCH
// /api/v1/webhook-subscriptions, plus GET list and one): the same fields and
// rules as /api/v2/webhooks, answered as `{ data }` without `meta`, like the
// other panel endpoints.
import { Hono } from "hono";
import type { z } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import {
  createWebhook,
  getWebhook,
  listWebhooks,
  updateWebhook,
} from "../../domain/webhooks/webhook_service.ts";
import { AppError } from "../../errors.ts";
import { requireScope } from "../auth.ts";
import type { AppEnv } from "../env.ts";
import { IdParam, parseOrRefuse, refuseQuery } from "../openapi.ts";
import {
  CreateWebhookBody,
  toWebhookResponse,
  UpdateWebhookBody,
} from "../schemas/webhook_schemas.ts";
import type { Context } from "hono";

async function body<T extends z.ZodType>(
  c: Context<AppEnv>,
  schema: T,
): Promise<z.infer<T>> {
  let value: unknown;
  try {
    value = await c.req.json();
  } catch {
    throw new AppError(
      "VALIDATION_ERROR",
      "Cannot parse request body: it is not valid JSON",
    );
  }
  return parseOrRefuse("json", schema, value);
}

function idOf(c: Context<AppEnv>): string {
  return parseOrRefuse("param", IdParam, { id: c.req.param("id") }).id;
}

export function panelWebhookRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const path = "/webhook-subscriptions";
  app.get(path, requireScope("webhooks:read"), refuseQuery, async (c) => {
    const hooks = await listWebhooks(container, c.get("principal").accountId);
    return c.json({ data: hooks.map(toWebhookResponse) });
  });
  app.get(
    `${path}/:id`,
    requireScope("webhooks:read"),
    refuseQuery,
    async (c) => {
      const hook = await getWebhook(container, {
        accountId: c.get("principal").accountId,
        id: idOf(c),
      });
      return c.json({ data: toWebhookResponse(hook) });
    },
  );
  app.post(path, requireScope("webhooks:write"), refuseQuery, async (c) => {
    const { webhook, secret } = await createWebhook(
      container,
      c.get("principal").accountId,
      await body(c, CreateWebhookBody),
    );
    return c.json({ data: { ...toWebhookResponse(webhook), secret } }, 201);
  });
  app.patch(
    `${path}/:id`,
    requireScope("webhooks:write"),
    refuseQuery,
    async (c) => {
      const id = idOf(c);
      const hook = await updateWebhook(container, {
        accountId: c.get("principal").accountId,
        id,
      }, await body(c, UpdateWebhookBody));
      return c.json({ data: toWebhookResponse(hook) });
    },
  );
  return app;
}

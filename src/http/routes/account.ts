import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import { getAccount } from "../../domain/accounts/account_service.ts";
import type { AppEnv } from "../env.ts";
import { COMMON_ERRORS, defineRoute, envelope, newRouter } from "../openapi.ts";
import { ok } from "../respond.ts";
import {
  AccountSchema,
  toAccountResponse,
} from "../schemas/account_schemas.ts";

const getAccountRoute = defineRoute("account:read", {
  method: "get",
  path: "/account",
  tags: ["Account"],
  summary: "The account of the calling key",
  responses: { 200: envelope(AccountSchema, "The account"), ...COMMON_ERRORS },
});

export function accountRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.openapi(getAccountRoute, async (c) => {
    const account = await getAccount(container, c.get("principal").accountId);
    return ok(c, toAccountResponse(account));
  });
  return app;
}

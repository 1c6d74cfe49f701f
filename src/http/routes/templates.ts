import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import type { AppEnv } from "../env.ts";
import { newRouter } from "../openapi.ts";

export function templateRoutes(_container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  return app;
}

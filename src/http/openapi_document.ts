import type { Hono } from "hono";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env.ts";
import { newRouter } from "./openapi.ts";

/**
 * GET /api/v2/openapi.json: the document of the route groups (and any test
 * extension), built on request from their registries, so a server that never
 * serves it never loads the generator or builds the groups' schemas.
 */
export function openApiDocument(groups: Hono<AppEnv>[]): unknown {
  const api = newRouter();
  api.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "API key (`bmk_...`) or agent user token (`bmu_...`)",
  });
  for (const group of groups) api.route("/", group as OpenAPIHono<AppEnv>);
  return api.getOpenAPI31Document({
    openapi: "3.1.0",
    info: {
      title: "Business Messaging API",
      version: "2.0.0",
      description:
        "Send and receive WhatsApp business messages; conversations, contacts, templates, channels and media.",
    },
    servers: [{ url: "/api/v2" }],
  });
}

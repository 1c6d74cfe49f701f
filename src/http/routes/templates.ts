import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import {
  getTemplate,
  getTemplateByName,
  listTemplates,
} from "../../domain/templates/template_service.ts";
import type { AppEnv } from "../env.ts";
import {
  COMMON_ERRORS,
  defineRoute,
  envelope,
  IdParam,
  newRouter,
  NOT_FOUND_ERROR,
  pageEnvelope,
} from "../openapi.ts";
import { ok } from "../respond.ts";
import {
  TemplateByNameQuery,
  TemplateListQuery,
  TemplateNameParam,
  TemplateSchema,
  toTemplateResponse,
} from "../schemas/template_schemas.ts";

const listTemplatesRoute = defineRoute("templates:read", {
  method: "get",
  path: "/templates",
  tags: ["Templates"],
  summary: "The account's message templates, newest first",
  request: { query: TemplateListQuery },
  responses: {
    200: pageEnvelope(TemplateSchema, "One page of templates"),
    ...COMMON_ERRORS,
  },
});

const getTemplateRoute = defineRoute("templates:read", {
  method: "get",
  path: "/templates/{id}",
  tags: ["Templates"],
  summary: "One template",
  request: { params: IdParam },
  responses: {
    200: envelope(TemplateSchema, "The template"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const getTemplateByNameRoute = defineRoute("templates:read", {
  method: "get",
  path: "/templates/by-name/{name}",
  tags: ["Templates"],
  summary: "The most recent template of a name",
  request: { params: TemplateNameParam, query: TemplateByNameQuery },
  responses: {
    200: envelope(TemplateSchema, "The template"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

export function templateRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.openapi(listTemplatesRoute, async (c) => {
    const query = c.req.valid("query");
    const page = await listTemplates(container, {
      accountId: c.get("principal").accountId,
      page: query.page,
      pageSize: query.pageSize,
      channelId: query.phoneNumberId,
      status: query.status,
    });
    return ok(c, page.items.map(toTemplateResponse), {
      meta: { page: page.page, pageSize: page.pageSize, total: page.total },
    });
  });
  app.openapi(getTemplateByNameRoute, async (c) => {
    const query = c.req.valid("query");
    const template = await getTemplateByName(container, {
      accountId: c.get("principal").accountId,
      name: c.req.valid("param").name,
      language: query.language,
      channelId: query.phoneNumberId,
    });
    return ok(c, toTemplateResponse(template));
  });
  app.openapi(getTemplateRoute, async (c) => {
    const template = await getTemplate(container, {
      accountId: c.get("principal").accountId,
      id: c.req.valid("param").id,
    });
    return ok(c, toTemplateResponse(template));
  });
  return app;
}

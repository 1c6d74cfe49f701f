import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import {
  createContact,
  getContact,
  listContacts,
  updateContact,
} from "../../domain/contacts/contact_service.ts";
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
  pageEnvelope,
} from "../openapi.ts";
import { ok } from "../respond.ts";
import {
  ContactListQuery,
  ContactSchema,
  CreateContactBody,
  toContactResponse,
  UpdateContactBody,
} from "../schemas/contact_schemas.ts";

const listContactsRoute = defineRoute("contacts:read", {
  method: "get",
  path: "/contacts",
  tags: ["Contacts"],
  summary: "The account's contacts, newest first",
  request: { query: ContactListQuery },
  responses: {
    200: pageEnvelope(ContactSchema, "One page of contacts"),
    ...COMMON_ERRORS,
  },
}, { agents: false });

const getContactRoute = defineRoute("contacts:read", {
  method: "get",
  path: "/contacts/{id}",
  tags: ["Contacts"],
  summary: "One contact",
  request: { params: IdParam },
  responses: {
    200: envelope(ContactSchema, "The contact"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
  },
});

const createContactRoute = defineRoute("contacts:write", {
  method: "post",
  path: "/contacts",
  tags: ["Contacts"],
  summary: "Create a contact",
  request: { body: jsonBody(CreateContactBody) },
  responses: {
    201: envelope(ContactSchema, "The new contact"),
    ...COMMON_ERRORS,
    ...CONFLICT_ERROR,
  },
});

const updateContactRoute = defineRoute("contacts:write", {
  method: "patch",
  path: "/contacts/{id}",
  tags: ["Contacts"],
  summary: "Change only the given fields of a contact",
  request: { params: IdParam, body: jsonBody(UpdateContactBody) },
  responses: {
    200: envelope(ContactSchema, "The updated contact"),
    ...COMMON_ERRORS,
    ...NOT_FOUND_ERROR,
    ...CONFLICT_ERROR,
  },
});

export function contactRoutes(container: Container): OpenAPIHono<AppEnv> {
  const app = newRouter();
  app.openapi(listContactsRoute, async (c) => {
    const query = c.req.valid("query");
    const page = await listContacts(container, {
      accountId: c.get("principal").accountId,
      page: query.page,
      pageSize: query.pageSize,
      search: query.search || undefined,
      tag: query.tag || undefined,
    });
    return ok(c, page.items.map(toContactResponse), {
      meta: { page: page.page, pageSize: page.pageSize, total: page.total },
    });
  });
  app.openapi(getContactRoute, async (c) => {
    const contact = await getContact(container, {
      viewer: viewerOf(c.get("principal")),
      id: c.req.valid("param").id,
    });
    return ok(c, toContactResponse(contact));
  });
  app.openapi(createContactRoute, async (c) => {
    const body = c.req.valid("json");
    const contact = await createContact(container, {
      accountId: c.get("principal").accountId,
      ...body,
    });
    return ok(c, toContactResponse(contact), { status: 201 });
  });
  app.openapi(updateContactRoute, async (c) => {
    const contact = await updateContact(container, {
      accountId: c.get("principal").accountId,
      id: c.req.valid("param").id,
      changes: c.req.valid("json"),
    });
    return ok(c, toContactResponse(contact));
  });
  return app;
}

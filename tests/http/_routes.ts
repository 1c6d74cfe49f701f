// Shared helpers of the cross-cutting API tests (scope matrix, isolation,
// OpenAPI): the operations of the generated document, a seeded tenant, and a
// valid request for each operation built from that tenant's ids. Past 300
// lines on purpose: the fixture and the tables that read it change together.
import assert from "node:assert/strict";
import {
  createHarness,
  type EngineName,
  ENGINES,
  type Harness,
  type HarnessOptions,
  type Tenant,
  type TestResponse,
} from "../_harness.ts";
import { isScope, type Scope } from "../../src/domain/accounts/scopes.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import { newId } from "../../src/ids.ts";
import { toDbTime } from "../../src/db/time.ts";
import {
  insertConversation,
  insertMessage,
  tick,
} from "./_conversation_fixtures.ts";
import { seedSocial } from "./_social_fixtures.ts";

// deno-lint-ignore no-explicit-any
export type Json = any;

export const API_PREFIX = "/api/v2";
const METHODS = ["get", "post", "put", "patch", "delete"];

export interface Operation {
  method: string;
  /** The document's path, relative to the server URL: `/contacts/{id}`. */
  path: string;
  /** `GET /contacts/{id}`: the key of the body and query tables below. */
  label: string;
  /** Every scope named in the operation's security requirements. */
  scopes: string[];
  /** The required scope when exactly one known scope is declared. */
  scope: Scope | undefined;
  pathParams: string[];
  op: Json;
}

/** GET /api/v2/openapi.json (no credentials). */
export async function loadDocument(h: Harness): Promise<Json> {
  const res = await h.request("GET", `${API_PREFIX}/openapi.json`, {
    key: null,
  });
  assert.equal(res.status, 200, "GET /api/v2/openapi.json");
  assert.equal(res.body.servers?.[0]?.url, API_PREFIX, "servers[0].url");
  return res.body;
}

/** Every operation of the document, in document order. */
export function apiOperations(doc: Json): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Json>(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const scopes: string[] = (op.security ?? []).flatMap((req: Json) =>
        Object.values<string[]>(req).flat()
      );
      const only = scopes.length === 1 ? scopes[0]! : undefined;
      out.push({
        method: method.toUpperCase(),
        path,
        label: `${method.toUpperCase()} ${path}`,
        scopes,
        scope: only && isScope(only) ? only : undefined,
        pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!),
        op,
      });
    }
  }
  return out;
}

/** One tenant's rows, created through the API, the services and direct inserts. */
export interface Fixture {
  tenant: Tenant;
  contactId: string;
  contactPhone: string;
  conversationId: string;
  /** An inbound text message with an upstream id. */
  messageId: string;
  inboundWamid: string;
  /** An inbound image whose media row is stored. */
  imageMessageId: string;
  mediaId: string;
  mediaKey: string;
  templateId: string;
  templateName: string;
  templateLanguage: string;
  webhookId: string;
  /** A second subscription, for DELETE (so the first stays for the other operations). */
  spareWebhookId: string;
  /** A row of the first subscription's delivery log (a queued test). */
  deliveryId: string;
  /** A connected Instagram account (its channelId) and one stored post with cached comments. */
  socialAccountId: string;
  socialPostId: string;
}

let phoneCounter = 0;

/** A fresh valid Argentine mobile number, distinct in this process. */
export function nextPhone(): string {
  return `+5491155${String(++phoneCounter).padStart(6, "0")}`;
}

/** Seeds a contact, a conversation with two inbound messages, a stored media and an approved template. */
export async function seedTenant(
  h: Harness,
  tenant: Tenant,
  options: { label: string },
): Promise<Fixture> {
  const accountId = tenant.account.id;
  const channelId = tenant.channel.id;
  const created = await h.request("POST", `${API_PREFIX}/contacts`, {
    key: tenant.key,
    body: { phoneNumber: nextPhone(), name: `Contact ${options.label}` },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const contactId: string = created.body.data.id;
  const now = h.clock.now();
  const conversationId = await insertConversation(h, {
    contactId,
    accountId,
    channelId,
    last_inbound_at: toDbTime(now),
    service_window_expires_at: toDbTime(new Date(now.getTime() + 86_400_000)),
    unread_count: 2,
  });
  const inboundWamid = `wamid.${options.label}-${newId()}`;
  const common = {
    conversationId,
    contactId,
    accountId,
    channel_id: channelId,
  };
  const messageId = await insertMessage(h, {
    ...common,
    wa_message_id: inboundWamid,
    content: { body: `Hello from ${options.label}` },
  });
  const mediaId = newId();
  const mediaKey = `${accountId}/2026/11/${mediaId}`;
  const imageMessageId = await insertMessage(h, {
    ...common,
    type: "image",
    wa_message_id: `wamid.${options.label}-${newId()}`,
    content: { id: `upstream-${mediaId}`, mime_type: "image/jpeg" },
    media_id: mediaId,
    media_key: mediaKey,
  });
  const at = tick(h);
  await h.container.db.insertInto("media").values({
    id: mediaId,
    account_id: accountId,
    message_id: imageMessageId,
    channel_id: channelId,
    upstream_media_id: `upstream-${mediaId}`,
    kind: "image",
    mime_type: "image/jpeg",
    file_name: "photo.jpg",
    sha256: null,
    size_bytes: 3,
    storage_key: mediaKey,
    status: "stored",
    error: null,
    created_at: at,
    updated_at: at,
  }).execute();
  const template = await createTemplate(h.container, {
    accountId,
    name: `welcome_${options.label}`,
    language: "es_AR",
    category: "UTILITY",
    status: "approved",
    components: [{ type: "BODY", text: "Hi {{1}}" }],
  });
  const hooks: string[] = [];
  for (const description of ["main", "spare"]) {
    const hook = await h.request("POST", `${API_PREFIX}/webhooks`, {
      key: tenant.key,
      body: {
        url: `http://127.0.0.1:9/${options.label}`,
        events: ["contact.created", "message.received"],
        description,
        headers: { "X-Fixture": options.label },
      },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    hooks.push(hook.body.data.id);
  }
  const test = await h.request(
    "POST",
    `${API_PREFIX}/webhooks/${hooks[0]}/test`,
    { key: tenant.key },
  );
  assert.equal(test.status, 202, JSON.stringify(test.body));
  return {
    tenant,
    contactId,
    contactPhone: created.body.data.phoneNumber,
    conversationId,
    messageId,
    inboundWamid,
    imageMessageId,
    mediaId,
    mediaKey,
    templateId: template.id,
    templateName: template.name,
    templateLanguage: template.language,
    webhookId: hooks[0]!,
    spareWebhookId: hooks[1]!,
    deliveryId: test.body.data.delivery.id,
    ...await seedSocial(h, tenant),
  };
}

/** Every identifier of the fixture's rows (to look for in another tenant's responses). */
export function fixtureIds(fx: Fixture): string[] {
  return [
    fx.tenant.account.id,
    fx.tenant.channel.id,
    fx.contactId,
    fx.conversationId,
    fx.messageId,
    fx.inboundWamid,
    fx.imageMessageId,
    fx.mediaId,
    fx.mediaKey,
    fx.templateId,
    fx.webhookId,
    fx.spareWebhookId,
    fx.deliveryId,
    fx.socialAccountId,
    fx.socialPostId,
  ];
}

/** `{id}` by the first path segment. */
const ID_BY_RESOURCE: Record<string, (fx: Fixture) => string> = {
  contacts: (fx) => fx.contactId,
  conversations: (fx) => fx.conversationId,
  messages: (fx) => fx.messageId,
  templates: (fx) => fx.templateId,
  media: (fx) => fx.mediaId,
  webhooks: (fx) => fx.webhookId,
  social: (fx) => fx.socialPostId,
};

/** `{id}` of operations that must not use the resource's usual row. */
const ID_BY_LABEL: Record<string, (fx: Fixture) => string> = {
  "DELETE /webhooks/{id}": (fx) => fx.spareWebhookId,
};

const PATH_VALUES: Record<string, (fx: Fixture) => string> = {
  name: (fx) => fx.templateName,
  phone: (fx) => fx.contactPhone,
  waMessageId: (fx) => fx.inboundWamid,
  deliveryId: (fx) => fx.deliveryId,
};

const QUERIES: Record<string, (fx: Fixture) => Record<string, string>> = {
  "GET /media/by-key": (fx) => ({ key: fx.mediaKey }),
  "GET /conversations/resolve": (fx) => ({ phone: fx.contactPhone }),
};

/** A template send (the harness tenant has no open window to a new number). */
export function templateSend(fx: Fixture, to: string): Json {
  return {
    phoneNumberId: fx.tenant.channel.id,
    to,
    type: "template",
    template: {
      name: fx.templateName,
      language: { code: fx.templateLanguage },
      components: [{
        type: "body",
        parameters: [{ type: "text", text: "Ana" }],
      }],
    },
  };
}

const BODIES: Record<string, (fx: Fixture) => Json> = {
  "POST /contacts": () => ({ phoneNumber: nextPhone(), name: "New contact" }),
  "PATCH /contacts/{id}": () => ({ name: "Renamed" }),
  "PATCH /conversations/{id}": () => ({ status: "pending" }),
  "POST /conversations/{id}/typing": () => ({ status: "on" }),
  "POST /messages": (fx) => templateSend(fx, nextPhone()),
  "POST /webhooks": () => ({
    url: "http://127.0.0.1:9/new",
    events: ["contact.created"],
  }),
  "PATCH /webhooks/{id}": () => ({ description: "renamed" }),
  "POST /messages/batch": (fx) => {
    const { phoneNumberId, ...item } = templateSend(fx, nextPhone());
    return { defaultPhoneNumberId: phoneNumberId, messages: [item] };
  },
};

export interface ApiRequest {
  method: string;
  url: string;
  body?: Json;
  /** A body that is not JSON (an upload), with its headers. */
  raw?: { body: string; headers: Record<string, string> };
}

export interface BuildOptions {
  /** Takes the path parameters from this fixture (another tenant's) instead. */
  pathFrom?: Fixture;
  /** Throws for a parameter or body with no fixture value instead of guessing. */
  strict?: boolean;
}

/** A valid request for the operation: real ids of the fixture's tenant, a minimal body. */
export function buildRequest(
  op: Operation,
  fx: Fixture,
  options: BuildOptions = {},
): ApiRequest {
  const missing = (what: string): never => {
    throw new Error(
      `No fixture value for ${what} of ${op.label}: add one to tests/http/_routes.ts`,
    );
  };
  const source = options.pathFrom ?? fx;
  const path = op.path.replace(/\{(\w+)\}/g, (_m, name: string) => {
    const pick = name === "id"
      ? ID_BY_LABEL[op.label] ?? ID_BY_RESOURCE[op.path.split("/")[1]!]
      : PATH_VALUES[name];
    if (pick) return encodeURIComponent(pick(source));
    return options.strict ? missing(`path parameter "${name}"`) : newId();
  });
  const query = new URLSearchParams(QUERIES[op.label]?.(fx));
  for (const p of op.op.parameters ?? []) {
    if (p.in !== "query" || !p.required || query.has(p.name)) continue;
    if (options.strict) missing(`query parameter "${p.name}"`);
    query.set(p.name, "x");
  }
  const qs = query.size ? `?${query}` : "";
  const req: ApiRequest = { method: op.method, url: API_PREFIX + path + qs };
  if (op.op.requestBody) {
    const body = BODIES[op.label];
    if (!body && options.strict) missing("the request body");
    req.body = body ? body(fx) : {};
  }
  return req;
}

/** Sends a built request with a key (or user token). */
export async function send(
  h: Harness,
  req: ApiRequest,
  key: string,
): Promise<TestResponse> {
  if (req.raw) {
    return await h.request(req.method, req.url, {
      key,
      rawBody: req.raw.body,
      headers: req.raw.headers,
    });
  }
  return await h.request(
    req.method,
    req.url,
    req.body === undefined ? { key } : { key, body: req.body },
  );
}

/** Every string anywhere in a JSON value. */
export function stringsIn(value: Json, out = new Set<string>()): Set<string> {
  if (typeof value === "string") out.add(value);
  else if (Array.isArray(value)) { for (const v of value) stringsIn(v, out); }
  else if (value && typeof value === "object") {
    for (const v of Object.values(value)) stringsIn(v, out);
  }
  return out;
}

/** `{ error: { code, message, details? }, meta: { requestId } }` with the status and code. */
export function assertErrorBody(
  res: TestResponse,
  status: number,
  code: string | RegExp,
  context = "",
): void {
  const where = `${context} ${JSON.stringify(res.body)}`.trim();
  assert.equal(res.status, status, where);
  assert.equal(typeof res.body?.error?.message, "string", where);
  if (typeof code === "string") assert.equal(res.body.error.code, code, where);
  else assert.match(res.body.error.code, code, where);
  assert.equal(res.body.meta?.requestId, res.headers.get("x-request-id"));
  assert.equal(typeof res.body.meta.requestId, "string", where);
}

/** A loopback stand-in for the Graph API that accepts every call (read receipts, typing). */
function startGraphStub(): Deno.HttpServer<Deno.NetAddr> {
  return Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    // An upload answers a media id, as Meta does; every other call succeeds.
    (req) =>
      Response.json(
        new URL(req.url).pathname.endsWith("/media")
          ? { id: "1000001" }
          : { success: true },
      ),
  );
}

/**
 * Registers one test per engine (like engineTest) whose harness talks to a
 * local Graph API stub, so routes that call the upstream stay on loopback.
 */
export function routeTest(
  name: string,
  fn: (h: Harness, t: Deno.TestContext) => Promise<void>,
  options: Omit<HarnessOptions, "engine"> & { engines?: EngineName[] } = {},
): void {
  const { engines = ENGINES, ...harnessOptions } = options;
  for (const engine of engines) {
    Deno.test({
      name: `[${engine}] ${name}`,
      sanitizeResources: engine === "sqlite",
      sanitizeOps: engine === "sqlite",
      fn: async (t) => {
        const graph = startGraphStub();
        try {
          await using h = await createHarness({
            ...harnessOptions,
            engine,
            env: {
              META_GRAPH_URL: `http://127.0.0.1:${graph.addr.port}/v22.0`,
              ...harnessOptions.env,
            },
          });
          await fn(h, t);
        } finally {
          await graph.shutdown();
        }
      },
    });
  }
}

// The route groups are imported on their first request (src/http/lazy_routes.ts).
// A cold app, built over the same database as a warm one whose groups are all
// loaded, must answer every operation of the document, each section's first
// request included, exactly as the warm one does: same status, same body, the
// same X-Request-Id and rate limit headers.
import assert from "node:assert/strict";
import { type Context, Hono } from "hono";
import { createApp } from "../../src/http/app.ts";
import type { AppEnv } from "../../src/http/env.ts";
import { handleError } from "../../src/http/errors.ts";
import {
  type LazyGroup,
  LazyGroups,
  type RouteGroup,
} from "../../src/http/lazy_routes.ts";
import { createHarness, type Harness, type TestResponse } from "../_harness.ts";
import {
  API_PREFIX,
  apiOperations,
  buildRequest,
  type Json,
  loadDocument,
  routeTest,
  seedTenant,
} from "./_routes.ts";

/** The body without what differs per request. */
function comparable(res: TestResponse): Json {
  const { meta, ...rest } = res.body ?? {};
  const { requestId: _requestId, ...otherMeta } = meta ?? {};
  return { status: res.status, body: rest, meta: otherMeta };
}

function assertRouted(res: TestResponse, label: string): void {
  const where = `${label}: ${res.status} ${JSON.stringify(res.body)}`;
  assert.doesNotMatch(
    String(res.body?.error?.message ?? ""),
    /^Cannot find route/,
    where,
  );
  const requestId = res.headers.get("x-request-id");
  assert.ok(requestId, `${where}: no X-Request-Id`);
  if (res.body?.meta) assert.equal(res.body.meta.requestId, requestId, where);
  assert.ok(res.headers.get("x-ratelimit-limit"), `${where}: no rate limit`);
}

async function coldAndWarm(h: Harness) {
  // The warm app (the harness's own) serves the document: every group loaded.
  const ops = apiOperations(await loadDocument(h));
  const fx = await seedTenant(h, h.tenant, { label: "lazy" });
  return { ops, fx, cold: createApp(h.container) };
}

routeTest(
  "a cold app answers each GET operation, each section's first request included, as a warm app does",
  async (h) => {
    const { ops, fx, cold } = await coldAndWarm(h);
    const gets = ops.filter((op) => op.method === "GET");
    assert.ok(gets.length > 10);
    for (const op of gets) {
      const req = buildRequest(op, fx);
      const first = await h.request(req.method, req.url, { app: cold });
      assertRouted(first, op.label);
      const warm = await h.request(req.method, req.url);
      assert.deepEqual(comparable(first), comparable(warm), op.label);
    }
  },
  { engines: ["sqlite"] },
);

routeTest(
  "a cold app routes every other operation of the document to its handler",
  async (h) => {
    const { ops, fx, cold } = await coldAndWarm(h);
    const writes = ops.filter((op) => op.method !== "GET");
    assert.ok(writes.length > 10);
    for (const op of writes) {
      const req = buildRequest(op, fx);
      const res = await h.request(req.method, req.url, {
        app: cold,
        ...(req.body === undefined ? {} : { body: req.body }),
      });
      assertRouted(res, op.label);
      assert.ok(res.status < 500, `${op.label}: ${JSON.stringify(res.body)}`);
    }
  },
  { engines: ["sqlite"] },
);

routeTest(
  "on a cold app, unknown paths under a lazy prefix, validation errors and the panel aliases answer as before",
  async (h) => {
    const cold = createApp(h.container);
    const unknown = await h.request("GET", `${API_PREFIX}/contacts/x/y/z`, {
      app: cold,
    });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, "NOT_FOUND");
    assert.equal(
      unknown.body.error.message,
      `Cannot find route GET ${API_PREFIX}/contacts/x/y/z`,
    );
    // Still behind the credential check: 401 before any group is loaded.
    const anonymous = await h.request("GET", `${API_PREFIX}/webhooks`, {
      app: cold,
      key: null,
    });
    assert.equal(anonymous.status, 401);
    const invalid = await h.request(
      "GET",
      `${API_PREFIX}/contacts/not-a-uuid`,
      {
        app: cold,
      },
    );
    assert.equal(invalid.status, 400);
    assert.equal(invalid.body.error.code, "VALIDATION_ERROR");
    const panel = await h.request("GET", "/api/v1/webhook-subscriptions", {
      app: cold,
    });
    assert.equal(panel.status, 200, JSON.stringify(panel.body));
    assert.deepEqual(panel.body, { data: [] });
    const panelInvalid = await h.request(
      "GET",
      "/api/v1/webhook-subscriptions/nope",
      { app: cold },
    );
    assert.equal(panelInvalid.status, 400);
    assert.ok(panelInvalid.headers.get("x-request-id"));
  },
  { engines: ["sqlite"] },
);

Deno.test("a route group whose module cannot be imported answers 503 and keeps the process not ready, whatever loads after it", async () => {
  await using h = await createHarness();
  // A real import that fails, as a chunk deleted under the server does.
  const gone = new URL("./no_such_routes.ts", import.meta.url).href;
  const group = (load: LazyGroup["load"]): LazyGroup[] => [
    { prefixes: ["/things"], load },
  ];
  const things = (): RouteGroup => () =>
    new Hono<AppEnv>().get("/things", (c) => c.json({ ok: true }));
  const app = new Hono<AppEnv>();
  app.use("*", async (c, next) => {
    c.set("requestId", "req_1");
    c.set("log", h.container.log);
    await next();
  });
  app.onError(handleError);
  const options = { onError: handleError, notFound, setup: () => {} };
  // Two instances with the same prefix, as /api/v2 and /api/v1 have.
  for (
    const [base, load] of [
      ["/a", () => import(gone)],
      ["/b", () => Promise.resolve(things())],
      // Imported, but its factory throws: a bug, not a missing part.
      ["/c", () =>
        Promise.resolve(() => {
          throw new Error("a bug in the group's factory");
        })],
    ] as const
  ) {
    const router = new Hono<AppEnv>();
    new LazyGroups(h.container, group(load), noop, base)
      .mount(router, base, options);
    app.route(base, router);
  }
  const buggy = await app.request("/c/things");
  assert.equal(buggy.status, 500);
  await buggy.body?.cancel();
  assert.equal(h.container.parts.broken, false);
  const missing = await app.request("/a/things");
  assert.equal(missing.status, 503);
  assert.deepEqual((await missing.json()).error, {
    code: "INTERNAL_ERROR",
    message: "Internal server error",
  });
  assert.equal((await app.request("/b/things")).status, 200);
  assert.equal(h.container.parts.broken, true);
  assert.equal((await h.request("GET", "/readyz")).status, 503);
  assert.equal((await h.request("GET", "/healthz")).status, 503);
});

const noop = () => Promise.resolve();

function notFound(c: Context<AppEnv>): Response {
  return c.json({ error: { code: "NOT_FOUND", message: "none" } }, 404);
}

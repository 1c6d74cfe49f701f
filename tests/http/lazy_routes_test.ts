// The route groups are imported on their first request (src/http/lazy_routes.ts).
// A cold app, built over the same database as a warm one whose groups are all
// loaded, must answer every operation of the document, each section's first
// request included, exactly as the warm one does: same status, same body, the
// same X-Request-Id and rate limit headers.
import assert from "node:assert/strict";
import { createApp } from "../../src/http/app.ts";
import type { Harness, TestResponse } from "../_harness.ts";
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

// Unknown query parameters: every operation of the OpenAPI document refuses
// them with the same 400, whether or not it takes a query of its own. New
// routes are covered as soon as they appear in the document.
import assert from "node:assert/strict";
import {
  apiOperations,
  assertErrorBody,
  buildRequest,
  loadDocument,
  routeTest,
  seedTenant,
  send,
} from "./_routes.ts";

const UNKNOWN = "unknownParam";
const REFUSAL = `Invalid query parameter: Unrecognized key: "${UNKNOWN}"`;

routeTest(
  "every operation refuses an unknown query parameter with the same 400",
  async (h, t) => {
    const fx = await seedTenant(h, h.tenant, { label: "q" });
    const ops = apiOperations(await loadDocument(h));
    assert.ok(ops.some((op) => op.label === "GET /account"));
    assert.ok(ops.some((op) => op.label === "GET /channels"));
    for (const op of ops) {
      await t.step(op.label, async () => {
        const req = buildRequest(op, fx, { strict: true });
        const valid = await send(h, req, fx.tenant.key);
        // The same request without the parameter passes validation, so the
        // 400 below is about the parameter alone.
        assert.notEqual(valid.status, 400, JSON.stringify(valid.body));
        const sep = req.url.includes("?") ? "&" : "?";
        const res = await send(
          h,
          { ...req, url: `${req.url}${sep}${UNKNOWN}=1` },
          fx.tenant.key,
        );
        assertErrorBody(res, 400, "VALIDATION_ERROR", op.label);
        assert.equal(res.body.error.message, REFUSAL, op.label);
      });
    }
  },
  { engines: ["sqlite"] },
);

routeTest(
  "the panel's webhook routes refuse an unknown query parameter the same way",
  async (h) => {
    const fx = await seedTenant(h, h.tenant, { label: "p" });
    const base = "/api/v1/webhook-subscriptions";
    const cases: [string, string, unknown][] = [
      ["GET", base, undefined],
      ["GET", `${base}/${fx.webhookId}`, undefined],
      ["POST", base, {
        url: "http://127.0.0.1:9/panel",
        events: ["contact.created"],
      }],
      ["PATCH", `${base}/${fx.webhookId}`, { description: "renamed" }],
    ];
    for (const [method, url, body] of cases) {
      const valid = await send(h, { method, url, body }, fx.tenant.key);
      assert.ok(valid.status < 300, `${method} ${url} ${valid.status}`);
      const res = await send(
        h,
        { method, url: `${url}?${UNKNOWN}=1`, body },
        fx.tenant.key,
      );
      assert.equal(res.status, 400, `${method} ${url}`);
      assert.equal(res.body.error.code, "VALIDATION_ERROR");
      assert.equal(res.body.error.message, REFUSAL, `${method} ${url}`);
    }
  },
  { engines: ["sqlite"] },
);

// The generated OpenAPI document: valid 3.1, complete per operation, and
// truthful: real responses validate against the schemas it documents.
import assert from "node:assert/strict";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { createHarness, type Harness } from "../_harness.ts";
import {
  API_PREFIX,
  apiOperations,
  buildRequest,
  type Json,
  loadDocument,
  type Operation,
  routeTest,
  seedTenant,
  send,
} from "./_routes.ts";
import { JSON_BOUNDS_NOTE } from "../../src/domain/json_bounds.ts";

const DOC_ID = "https://bm.test/openapi.json";
const UUID_REGEXP =
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME_REGEXP =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/** Ajv over the whole document, so `#/components/schemas/X` resolves as written. */
function schemaChecker(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  ajv.addFormat("uuid", UUID_REGEXP);
  ajv.addFormat(
    "date-time",
    (s: string) => DATE_TIME_REGEXP.test(s) && !Number.isNaN(Date.parse(s)),
  );
  ajv.addFormat("email", /^[^\s@]+@[^\s@]+$/);
  ajv.addFormat("uri", (s: string) => URL.canParse(s));
  ajv.addSchema({ ...doc, $id: DOC_ID });
  return (op: Operation, res: { status: number; body: unknown }) => {
    const where = `${op.label} -> ${res.status}`;
    const content = op.op.responses?.[res.status]?.content;
    assert.ok(
      content?.["application/json"]?.schema,
      `${where} is undocumented`,
    );
    const pointer = ["paths", op.path, op.method.toLowerCase(), "responses"]
      .concat([String(res.status), "content", "application/json", "schema"])
      .map((s) =>
        encodeURIComponent(s.replaceAll("~", "~0").replaceAll("/", "~1"))
      )
      .join("/");
    const validate = ajv.compile({ $ref: `${DOC_ID}#/${pointer}` });
    const valid = validate(res.body);
    assert.ok(
      valid,
      `${where} does not match its schema: ${
        ajv.errorsText(validate.errors)
      }\n${JSON.stringify(res.body)}`,
    );
  };
}

async function documentOf(h: Harness) {
  const doc = await loadDocument(h);
  return { doc, ops: apiOperations(doc) };
}

Deno.test("GET /api/v2/openapi.json is a valid OpenAPI 3.1 document", async () => {
  await using h = await createHarness();
  const { doc } = await documentOf(h);
  assert.equal(doc.openapi, "3.1.0");
  const result = await new Validator().validate(doc);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2));
});

Deno.test("every operation has a summary, tags and a JSON 2xx response", async () => {
  await using h = await createHarness();
  const { ops } = await documentOf(h);
  assert.ok(ops.length > 0);
  for (const op of ops) {
    assert.ok(typeof op.op.summary === "string" && op.op.summary, op.label);
    assert.ok(Array.isArray(op.op.tags) && op.op.tags.length > 0, op.label);
    const ok = Object.entries<Json>(op.op.responses ?? {})
      .filter(([status]) => /^2\d\d$/.test(status));
    assert.ok(ok.length > 0, `${op.label} documents no 2xx response`);
    for (const [status, response] of ok) {
      const schema = response.content?.["application/json"]?.schema;
      assert.ok(
        schema && Object.keys(schema).length > 0,
        `${op.label} ${status}`,
      );
    }
  }
});

Deno.test("Message content is typed per message type", async () => {
  await using h = await createHarness();
  const { doc } = await documentOf(h);
  const schemas = doc.components.schemas;
  const resolve = (s: Json): Json =>
    s?.$ref ? schemas[s.$ref.replace("#/components/schemas/", "")] : s;
  const variants: Json[] = schemas.Message?.oneOf ?? schemas.Message?.anyOf;
  assert.ok(
    Array.isArray(variants) && variants.length > 1,
    "Message is a union",
  );
  for (const variant of variants.map(resolve)) {
    const types = variant.properties.type.enum;
    const content = resolve(variant.properties.content);
    assert.ok(content, `content of ${types}`);
    assert.equal(content.type, "object", `content of ${types} is an object`);
    assert.ok(
      variant.required.includes("content"),
      `${types} requires content`,
    );
  }
  const text = variants.map(resolve).find((v) =>
    v.properties.type.enum.includes("text")
  );
  const textContent = resolve(text.properties.content);
  assert.deepEqual(textContent.properties.text, { type: "string" });
  assert.deepEqual(textContent.required, ["text"]);
});

Deno.test("every free-form object in a request body documents its depth and size bounds", async () => {
  await using h = await createHarness();
  const { doc } = await documentOf(h);
  const found: string[] = [];
  const seen = new Set<Json>();
  const walk = (node: Json, where: string) => {
    if (typeof node !== "object" || node === null || seen.has(node)) return;
    seen.add(node);
    if (typeof node.$ref === "string") {
      const name = node.$ref.replace("#/components/schemas/", "");
      return walk(doc.components.schemas[name], name);
    }
    const free = node.additionalProperties;
    if (typeof free === "object" && Object.keys(free).length === 0) {
      found.push(where);
      assert.match(
        node.description ?? "",
        new RegExp(JSON_BOUNDS_NOTE),
        `${where} is free-form without its bounds`,
      );
    }
    for (const [key, child] of Object.entries(node)) {
      walk(child, `${where}.${key}`);
    }
  };
  for (const [path, ops] of Object.entries<Json>(doc.paths)) {
    for (const [method, op] of Object.entries<Json>(ops)) {
      walk(op.requestBody, `${method.toUpperCase()} ${path}`);
    }
  }
  // flow_action_payload.data and the template flow button's flow_action_data.
  assert.ok(found.length >= 2, `free-form request fields: ${found}`);
});

routeTest(
  "real responses match the documented schemas",
  async (h, t) => {
    const fx = await seedTenant(h, h.tenant, { label: "a" });
    const { doc, ops } = await documentOf(h);
    const check = schemaChecker(doc);
    const posts = [
      "POST /contacts",
      "POST /messages",
      "POST /messages/batch",
      "POST /webhooks",
      "POST /webhooks/{id}/test",
      "POST /webhooks/{id}/replay/{deliveryId}",
      "PATCH /webhooks/{id}",
    ];
    const checked = ops.filter((op) =>
      op.method === "GET" || posts.includes(op.label)
    );
    assert.ok(checked.length >= posts.length + 1);
    for (const op of checked) {
      await t.step(op.label, async () => {
        const res = await send(
          h,
          buildRequest(op, fx, { strict: true }),
          fx.tenant.key,
        );
        assert.ok(res.status < 300, `${op.label}: ${JSON.stringify(res.body)}`);
        if (Array.isArray(res.body.data)) {
          assert.ok(
            res.body.data.length > 0,
            `${op.label} returned no rows to check`,
          );
        }
        check(op, res);
      });
    }
    await t.step("an error response", async () => {
      const op = ops.find((o) => o.label === "GET /contacts/{id}")!;
      const res = await h.request(
        "GET",
        `${API_PREFIX}/contacts/${crypto.randomUUID()}`,
      );
      assert.equal(res.status, 404);
      check(op, res);
    });
  },
  { engines: ["sqlite"] },
);

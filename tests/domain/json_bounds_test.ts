import assert from "node:assert/strict";
import {
  jsonBoundsProblem,
  jsonDepth,
  MAX_JSON_BYTES,
  MAX_JSON_DEPTH,
} from "../../src/domain/json_bounds.ts";
import {
  canonicalJson,
  requestHash,
} from "../../src/domain/idempotency/idempotency_service.ts";

/** `levels` nested arrays or objects, built without recursion. */
function nested(levels: number, kind: "object" | "array"): unknown {
  let v: unknown = 1;
  for (let i = 0; i < levels; i++) v = kind === "array" ? [v] : { a: v };
  return v;
}

Deno.test("jsonDepth counts objects and arrays alike, scalars not at all", () => {
  assert.equal(jsonDepth("text"), 0);
  assert.equal(jsonDepth({}), 1);
  assert.equal(jsonDepth({ a: [1, { b: null }], c: "x" }), 3);
  assert.equal(jsonDepth(nested(40, "array")), 40);
  assert.equal(jsonDepth(nested(40, "object")), 40);
});

Deno.test("jsonDepth walks any depth without recursion and stops once past the limit", () => {
  assert.equal(jsonDepth(nested(200_000, "object")), 200_000);
  assert.equal(jsonDepth(nested(200_000, "array"), 32), 33);
});

Deno.test("jsonBoundsProblem allows the bounds and names what is past them", () => {
  assert.equal(jsonBoundsProblem(nested(MAX_JSON_DEPTH, "object")), null);
  assert.match(
    jsonBoundsProblem(nested(MAX_JSON_DEPTH + 1, "object"))!,
    /at most 32 levels/,
  );
  const fits = { s: "x".repeat(MAX_JSON_BYTES - 8) }; // {"s":"…"} adds 8 bytes
  assert.equal(jsonBoundsProblem(fits), null);
  assert.match(
    jsonBoundsProblem({ s: "é".repeat(MAX_JSON_BYTES / 2) })!,
    /at most 65536 bytes as JSON, got 65544/,
  );
});

Deno.test("canonicalJson sorts keys, drops undefined members and keeps JSON's own scalars", () => {
  assert.equal(
    canonicalJson({
      b: [1, "x", null, undefined],
      a: { d: true, c: undefined },
    }),
    '{"a":{"d":true},"b":[1,"x",null,null]}',
  );
  assert.equal(canonicalJson([]), "[]");
  assert.equal(canonicalJson({}), "{}");
  assert.equal(canonicalJson(undefined), "null");
});

Deno.test("the idempotency hash is the same for reordered keys and survives a body nested 100,000 deep", async () => {
  assert.equal(
    await requestHash("POST /messages", { a: 1, b: { c: 2, d: 3 } }),
    await requestHash("POST /messages", { b: { d: 3, c: 2 }, a: 1 }),
  );
  const deep = nested(100_000, "object");
  const text = canonicalJson(deep);
  assert.equal(text.length, '{"a":'.length * 100_000 + 1 + 100_000);
  assert.match(
    await requestHash("POST /messages/batch", deep),
    /^[0-9a-f]{64}$/,
  );
});

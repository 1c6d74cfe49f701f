// canonicalJson writes by recursion up to a depth and falls back to the
// explicit stack past it; its text must be the stack's, byte for byte, or
// the idempotency hashes stored before would no longer match their replays.
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  canonicalJson,
  canonicalJsonByStack,
} from "../../../src/domain/idempotency/idempotency_service.ts";

/** `levels` nested arrays or objects around `inner`, built without recursion. */
function nested(levels: number, kind: "object" | "array", inner: unknown) {
  let v = inner;
  for (let i = 0; i < levels; i++) v = kind === "array" ? [v] : { b: v, a: 1 };
  return v;
}

Deno.test("canonicalJson writes the stack's text for any JSON value, undefined members and holes", () => {
  const value = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom(undefined, -0, 1e21, "\u2028", "\ud800", "é", "\u0000"),
      fc.array(tie("node"), { maxLength: 4 }),
      fc.sparseArray(tie("node"), { maxLength: 4 }),
      fc.dictionary(
        fc.oneof(
          fc.string({ maxLength: 3 }),
          fc.constantFrom("10", "2", "__proto__", "é", "Z", "a"),
        ),
        tie("node"),
        { maxKeys: 5 },
      ),
    ),
  })).node;
  fc.assert(
    fc.property(value, (v) => {
      assert.equal(canonicalJson(v), canonicalJsonByStack(v));
    }),
    { numRuns: 3_000 },
  );
});

Deno.test("canonicalJson gives the stack's text around its recursion limit and far past it", () => {
  for (const levels of [1, 62, 63, 64, 65, 66, 200, 20_000]) {
    for (const kind of ["object", "array"] as const) {
      const v = nested(levels, kind, { y: [1, undefined], x: "é" });
      assert.equal(
        canonicalJson(v),
        canonicalJsonByStack(v),
        `${kind} ${levels}`,
      );
    }
  }
});

Deno.test("canonicalJson writes a batch body as the stack does", () => {
  const body = {
    messages: Array.from({ length: 100 }, (_, n) => ({
      to: `+54911${10_000_000 + n}`,
      type: "template",
      clientRef: `ref-${n}`,
      template: {
        name: "order_update",
        language: { code: "es_AR" },
        components: [{
          type: "body",
          parameters: [{ type: "text", text: `Cliente ${n}` }],
        }],
      },
    })),
    defaultPhoneNumberId: "0195f3b2-0000-7000-8000-000000000000",
    respectOptOut: undefined,
  };
  const text = canonicalJson(body);
  assert.equal(text, canonicalJsonByStack(body));
  assert.ok(
    text.startsWith('{"defaultPhoneNumberId":"0195f3b2-'),
    text.slice(0, 40),
  );
});

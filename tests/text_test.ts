import assert from "node:assert/strict";
import { nulPath, parseJsonWithoutNul, replaceNul } from "../src/text.ts";

Deno.test("nulPath names the first string or key holding a NUL, at any depth", () => {
  assert.equal(nulPath({ a: "x", b: [1, true, null, "y"] }), null);
  assert.deepEqual(nulPath("a\u0000"), []);
  assert.deepEqual(nulPath({ a: [1, "x", { b: "c\u0000d" }] }), [
    "a",
    2,
    "b",
  ]);
  assert.deepEqual(nulPath({ ok: 1, "k\u0000": 1 }), ["k\\u0000"]);
  assert.deepEqual(nulPath({ a: "\u0000", b: "\u0000" }), ["a"], "the first");
  // Deeper than any recursion would go: an explicit stack.
  let deep: unknown = "\u0000";
  for (let i = 0; i < 20_000; i++) deep = [deep];
  assert.equal(nulPath(deep)!.length, 20_000);
});

Deno.test("parseJsonWithoutNul replaces each NUL in strings and keys with U+FFFD", () => {
  const text = String
    .raw`{"a\u0000":["x\u0000y",{"__proto__":{"z":"\u0000"}}],"n":1}`;
  const value = parseJsonWithoutNul(text) as Record<string, unknown>;
  assert.deepEqual(
    Object.keys(value),
    ["a\uFFFD", "n"],
    "keys keep their order",
  );
  const [s, o] = value["a\uFFFD"] as [string, Record<string, unknown>];
  assert.equal(s, "x\uFFFDy");
  // JSON's "__proto__" stays an own key, never the object's prototype.
  assert.equal(Object.getPrototypeOf(o), Object.prototype);
  assert.deepEqual(Object.keys(o), ["__proto__"]);
  assert.deepEqual(Object.getOwnPropertyDescriptor(o, "__proto__")?.value, {
    z: "\uFFFD",
  });
  const plain = String.raw`{"a":"\\u0000 is text"}`;
  assert.deepEqual(parseJsonWithoutNul(plain), { a: "\\u0000 is text" });
  let deep = String.raw`"\u0000"`;
  for (let i = 0; i < 20_000; i++) deep = `[${deep}]`;
  let v = parseJsonWithoutNul(deep);
  while (Array.isArray(v)) v = v[0];
  assert.equal(v, "\uFFFD");
  assert.equal(replaceNul("a\u0000b\u0000"), "a\uFFFDb\uFFFD");
});

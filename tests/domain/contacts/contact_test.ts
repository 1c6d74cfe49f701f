import assert from "node:assert/strict";
import {
  checkCustomFields,
  checkTags,
  mergeCustomFields,
  normaliseTags,
  phoneSearchDigits,
} from "../../../src/domain/contacts/contact.ts";
import { AppError } from "../../../src/errors.ts";

Deno.test("normaliseTags trims, drops empty tags and keeps the first of repeats", () => {
  assert.deepEqual(normaliseTags([" b ", "a", "b", "  ", "a "]), ["b", "a"]);
  assert.deepEqual(normaliseTags([]), []);
});

Deno.test("mergeCustomFields sets given keys and removes keys set to null", () => {
  const existing = { a: 1, b: "x", c: true };
  assert.deepEqual(
    mergeCustomFields(existing, { b: null, c: false, d: 0, e: null }),
    { a: 1, c: false, d: 0 },
  );
  assert.deepEqual(existing, { a: 1, b: "x", c: true }, "input untouched");
});

Deno.test("phoneSearchDigits reads phone-like search text only", () => {
  assert.equal(phoneSearchDigits("+54 9 11 2233-4455"), "5491122334455");
  assert.equal(phoneSearchDigits("(11) 2233"), "112233");
  assert.equal(phoneSearchDigits("12"), null);
  assert.equal(phoneSearchDigits("ana 11"), null);
});

Deno.test("checkTags rejects more than 50 tags and tags over 64 characters", () => {
  const fifty = Array.from({ length: 50 }, (_, i) => `t${i}`);
  assert.equal(checkTags([...fifty, "t0"]).length, 50);
  assert.throws(
    () => checkTags([...fifty, "t50"]),
    (e) => e instanceof AppError && e.code === "VALIDATION_ERROR",
  );
  assert.deepEqual(checkTags([` ${"x".repeat(64)} `]), ["x".repeat(64)]);
  assert.throws(() => checkTags(["x".repeat(65)]), /at most 64 characters/);
});

Deno.test("checkCustomFields rejects more than 50 keys", () => {
  const fields = Object.fromEntries(
    Array.from({ length: 51 }, (_, i) => [`k${i}`, i]),
  );
  assert.throws(
    () => checkCustomFields(fields),
    /at most 50 keys are allowed, got 51/,
  );
  delete fields.k0;
  assert.equal(checkCustomFields(fields), fields);
});

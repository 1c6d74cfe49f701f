// WhatsApp's text markers as the panel reads them: what format.tsx renders
// and what the list's one-line previews keep.
import assert from "node:assert/strict";
import { blocksOf, plainText } from "../../src/panel/client/marks.ts";

Deno.test("a preview drops WhatsApp's markers and keeps their text", () => {
  assert.equal(plainText("Sí, tenemos en *M*"), "Sí, tenemos en M");
  assert.equal(
    plainText("*bold _and italic_* ~gone~ `co*de*`"),
    "bold and italic gone co*de*",
  );
  assert.equal(plainText("```let x = *1*;```"), "let x = *1*;");
  assert.equal(plainText("line one\n\nline  two"), "line one line two");
});

Deno.test("a lone marker is text", () => {
  assert.equal(plainText("2 * 3 = 6"), "2 * 3 = 6");
  assert.equal(plainText("**"), "**");
  assert.equal(plainText("open ```code"), "open ```code");
  assert.deepEqual(blocksOf("a```b```c```d"), ["a", "b", "c```d"]);
});

Deno.test("markers pair only at word edges, around text without edge spaces", () => {
  assert.equal(plainText("snake_case_name"), "snake_case_name");
  assert.equal(plainText("2*3*4"), "2*3*4");
  assert.equal(plainText("*not bold *"), "*not bold *");
  assert.equal(plainText("_a_, *b*! (~c~)"), "a, b! (c)");
  assert.equal(plainText("¡*Hola*!"), "¡Hola!");
  assert.equal(plainText("*x*"), "x");
});

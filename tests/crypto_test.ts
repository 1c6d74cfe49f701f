import assert from "node:assert/strict";
import { fromHex, toHex } from "../src/crypto.ts";

Deno.test("fromHex reads even-length hex in either case and round-trips toHex", () => {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  assert.deepEqual(fromHex(toHex(bytes)), bytes);
  assert.deepEqual(fromHex(toHex(bytes).toUpperCase()), bytes);
  assert.deepEqual(fromHex("00ff7F80"), new Uint8Array([0, 255, 127, 128]));
  assert.deepEqual(fromHex(""), new Uint8Array(0));
});

Deno.test("fromHex refuses odd lengths and non-hex digits instead of skipping them", () => {
  for (const bad of ["a", "abc", "zz", "0g", " 00", "00 ", "+1", "0x00"]) {
    assert.equal(fromHex(bad), null, bad);
  }
});

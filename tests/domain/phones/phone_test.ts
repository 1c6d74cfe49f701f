import assert from "node:assert/strict";
import { phoneVariants } from "../../../src/domain/phones/phone.ts";

Deno.test("phoneVariants reads an Argentine number with both the mobile 9 and the old 15", () => {
  // Area codes of 2, 3 and 4 digits: the 15 follows the area code.
  const cases: [string, string][] = [
    ["+54 9 11 15 2233 4455", "+5491122334455"],
    ["549 11 15 2233-4455", "+5491122334455"],
    ["9 11 15 2233 4455", "+5491122334455"],
    ["+54 9 351 15 123 4567", "+5493511234567"],
    ["+54 9 2966 15 12 3456", "+5492966123456"],
  ];
  for (const [input, mobile] of cases) {
    const variants = phoneVariants(input, "AR");
    assert.equal(variants[0], mobile, input);
    assert.ok(variants.includes(mobile.replace("+549", "+54")), input);
  }
});

Deno.test("phoneVariants keeps a 15 that begins the local number and refuses a short one", () => {
  // 11 1522-3344 is a full number whose local part starts with 15.
  assert.equal(phoneVariants("+54 9 11 1522 3344", "AR")[0], "+5491115223344");
  assert.deepEqual(phoneVariants("+54 9 11 15", "AR"), []);
  assert.deepEqual(phoneVariants("+54 9 11 15 2233", "AR"), []);
  // Bare digits with a leading 9 are Argentine only for an Argentine account.
  assert.deepEqual(phoneVariants("9 11 15 2233 4455", "US"), []);
});

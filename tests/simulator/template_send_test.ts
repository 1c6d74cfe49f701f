// The simulator checks a template send's components as the Cloud API does
// before it looks the template up: 131008 for a missing field, 132012 for a
// parameter of the wrong format, 132000 for a header of several parameters,
// 100 for named and positional mixed or text Meta refuses.
import assert from "node:assert/strict";
import { validateSend } from "../../src/simulator/send_validation.ts";
import {
  CAROUSEL,
  CATALOG,
  mediaHeader,
  NAMED,
  OFFER,
  ORDER,
  OTP,
  text,
} from "../_support/template_fixtures.ts";

type Json = Record<string, unknown>;

function templateSend(components: unknown) {
  return validateSend({
    messaging_product: "whatsapp",
    to: "5491122334455",
    type: "template",
    template: { name: "t", language: { code: "en_US" }, components },
  });
}

Deno.test("the simulator takes every well-formed template send", () => {
  const location = {
    type: "location",
    location: { latitude: 1, longitude: 2, name: "Shop", address: "Main St" },
  };
  for (
    const fixture of [
      ORDER,
      NAMED,
      OTP,
      OFFER,
      CAROUSEL,
      CATALOG,
      mediaHeader("LOCATION", location),
      mediaHeader("DOCUMENT", {
        type: "document",
        document: { link: "https://cdn.example/a.pdf", filename: "a.pdf" },
      }),
    ]
  ) {
    assert.equal(templateSend(fixture.valid), null, fixture.name);
  }
});

Deno.test("the simulator answers a malformed template send with Meta's code", () => {
  const body = (...parameters: Json[]) => ({ type: "body", parameters });
  const rows: [string, unknown, number, RegExp][] = [
    ["an unknown component", [{ type: "footer", parameters: [] }], 100, /type/],
    [
      "a button without sub_type",
      [{ type: "button", index: "0", parameters: [] }],
      131008,
      /sub_type/,
    ],
    [
      "a button without index",
      [{ type: "button", sub_type: "url", parameters: [] }],
      131008,
      /index/,
    ],
    [
      "a button index of 10",
      [{ type: "button", sub_type: "url", index: 10, parameters: [] }],
      100,
      /index/,
    ],
    ["a body without parameters", [{ type: "body" }], 131008, /parameters/],
    [
      "two header parameters",
      [{ type: "header", parameters: [text("a"), text("b")] }],
      132000,
      /^header: number of localizable_params \(2\) does not match the expected number of params \(1\)$/,
    ],
    [
      "an image in the body",
      [body({ type: "image", image: { id: "1" } })],
      132012,
      /^body: Format mismatch, expected TEXT, received IMAGE$/,
    ],
    [
      "text for a quick reply",
      [{
        type: "button",
        sub_type: "quick_reply",
        index: "0",
        parameters: [text("x")],
      }],
      132012,
      /^button: Format mismatch, expected PAYLOAD, received TEXT$/,
    ],
    [
      "a currency without amount_1000",
      [body({
        type: "currency",
        currency: { fallback_value: "$", code: "USD" },
      })],
      131008,
      /amount_1000/,
    ],
    [
      "a date_time without fallback_value",
      [body({ type: "date_time", date_time: {} })],
      131008,
      /fallback_value/,
    ],
    [
      "an image by link and id",
      [{
        type: "header",
        parameters: [{ type: "image", image: { id: "1", link: "https://a" } }],
      }],
      100,
      /exactly one of id or link/,
    ],
    [
      "named and positional mixed",
      [body(text("a", "first_name"), text("b"))],
      100,
      /^Parameter name is missing or empty$/,
    ],
    [
      "a new line in a body parameter",
      [body(text("a\nb"))],
      100,
      /new-line\/tab characters or more than 4 consecutive spaces/,
    ],
    ["a carousel without cards", [{ type: "carousel" }], 131008, /cards/],
  ];
  for (const [what, components, code, details] of rows) {
    const rejection = templateSend(components);
    assert.ok(rejection, `${what}: accepted`);
    assert.equal(rejection.code, code, what);
    assert.match(rejection.details, details, what);
  }
});

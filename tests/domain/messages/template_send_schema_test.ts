// The API's schema for a template send's components: Meta's shapes, refused
// naming the field, and normalized as Meta's examples write them.
import assert from "node:assert/strict";
import {
  body,
  button,
  header,
  parsedComponents,
  parseTemplateSend,
  payload,
  text,
} from "../../_support/template_fixtures.ts";

type Json = Record<string, unknown>;
const image = { type: "image", image: { link: "https://cdn.example/a.jpg" } };

Deno.test("the schema refuses a component or parameter of the wrong shape, naming its field", () => {
  const currency = (value: Json) => body({ type: "currency", currency: value });
  const good = { fallback_value: "$1", code: "USD", amount_1000: 1000 };
  const rows: [string, unknown, string][] = [
    ["a button without sub_type", {
      type: "button",
      index: "0",
      parameters: [payload],
    }, "template.components.0.sub_type"],
    ["a button without index", {
      type: "button",
      sub_type: "url",
      parameters: [],
    }, "template.components.0.index"],
    [
      "an index past 9",
      button("url", "10", text("x")),
      "template.components.0.index",
    ],
    [
      "a sub_type Meta does not have",
      button("voice", "0"),
      "template.components.0.sub_type",
    ],
    [
      "a sub_type on a body",
      { ...body(text("x")), sub_type: "url" },
      "template.components.0.sub_type",
    ],
    [
      "a header without parameters",
      { type: "header" },
      "template.components.0.parameters",
    ],
    [
      "a carousel without cards",
      { type: "carousel" },
      "template.components.0.cards",
    ],
    [
      "cards on a body",
      { ...body(), cards: [] },
      "template.components.0.cards",
    ],
    [
      "a currency code in lower case",
      currency({ ...good, code: "usd" }),
      "template.components.0.parameters.0.currency.code",
    ],
    [
      "a currency without amount_1000",
      currency({ fallback_value: "$1", code: "USD" }),
      "template.components.0.parameters.0.currency.amount_1000",
    ],
    [
      "a currency amount with decimals",
      currency({ ...good, amount_1000: 10.5 }),
      "template.components.0.parameters.0.currency.amount_1000",
    ],
    [
      "a currency without fallback_value",
      currency({ code: "USD", amount_1000: 1 }),
      "template.components.0.parameters.0.currency.fallback_value",
    ],
    [
      "a date_time without fallback_value",
      body({ type: "date_time", date_time: {} }),
      "template.components.0.parameters.0.date_time.fallback_value",
    ],
    [
      "a date_time with a key Meta does not have",
      body({
        type: "date_time",
        date_time: { fallback_value: "x", timezone: "UTC" },
      }),
      "template.components.0.parameters.0.date_time",
    ],
    [
      "a date_time month of 13",
      body({
        type: "date_time",
        date_time: { fallback_value: "x", month: 13 },
      }),
      "template.components.0.parameters.0.date_time.month",
    ],
    [
      "an image by link and id",
      header({ type: "image", image: { link: "https://a/b.jpg", id: "1" } }),
      "template.components.0.parameters.0.image",
    ],
    [
      "an image by neither",
      header({ type: "image", image: {} }),
      "template.components.0.parameters.0.image",
    ],
    [
      "a filename on an image",
      header({ type: "image", image: { id: "1", filename: "a.jpg" } }),
      "template.components.0.parameters.0.image",
    ],
    [
      "a coupon code past 15 characters",
      button("copy_code", "0", {
        type: "coupon_code",
        coupon_code: "X".repeat(16),
      }),
      "template.components.0.parameters.0.coupon_code",
    ],
    [
      "an empty payload",
      button("quick_reply", "0", { type: "payload", payload: "" }),
      "template.components.0.parameters.0.payload",
    ],
    [
      "a parameter_name in capitals",
      body(text("x", "First")),
      "template.components.0.parameters.0.parameter_name",
    ],
    [
      "a parameter_name on an image",
      header({ ...image, parameter_name: "pic" }),
      "template.components.0.parameters.0",
    ],
  ];
  for (const [what, component, path] of rows) {
    const result = parseTemplateSend([component]);
    assert.ok(!result.ok, `${what}: accepted`);
    assert.equal(result.problem.code, "VALIDATION_ERROR", what);
    assert.ok(
      result.problem.details?.some((d) => d.path === path),
      `${what}: ${JSON.stringify(result.problem.details)}`,
    );
  }
});

Deno.test("the schema gives a button's index as a string and its sub_type in lower case, as Meta's examples do", () => {
  const [first, second] = parsedComponents([
    button("CATALOG", 0 as unknown as string),
    button("Quick_Reply", "1", payload),
  ]);
  assert.deepEqual(first, {
    type: "button",
    sub_type: "catalog",
    index: "0",
    parameters: [],
  });
  assert.equal(second!.index, "1");
  assert.equal(second!.sub_type, "quick_reply");
});

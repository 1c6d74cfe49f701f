// Reading a template as Meta defines it: its parameter format, and any
// definition at all without throwing.
import assert from "node:assert/strict";
import {
  parameterFormatOf,
  templatePlan,
} from "../../../src/domain/templates/template_plan.ts";
import { templateSendProblems } from "../../../src/domain/templates/template_params.ts";
import {
  body,
  header,
  parsedComponents,
  text,
} from "../../_support/template_fixtures.ts";

type Json = Record<string, unknown>;

Deno.test("the format is Meta's parameter_format, else read from the components", () => {
  const bodyOf = (text: string, example?: Json) => [{
    type: "BODY",
    text,
    ...(example ? { example } : {}),
  }];
  const cases: [string, unknown, unknown[], string][] = [
    ["given NAMED", "NAMED", bodyOf("Hi {{1}}"), "NAMED"],
    ["given in lower case", "named", bodyOf("Hi {{1}}"), "NAMED"],
    ["given POSITIONAL", "POSITIONAL", bodyOf("Hi {{name}}"), "POSITIONAL"],
    [
      "numbered placeholders",
      undefined,
      bodyOf("Hi {{1}}, {{2}}"),
      "POSITIONAL",
    ],
    ["named placeholders", null, bodyOf("Hi {{first_name}}"), "NAMED"],
    [
      "named examples",
      undefined,
      bodyOf("Hi", { body_text_named_params: [] }),
      "NAMED",
    ],
    [
      "a named header",
      undefined,
      [{ type: "HEADER", format: "TEXT", text: "{{order}}" }],
      "NAMED",
    ],
    ["no placeholders", undefined, bodyOf("Hi"), "POSITIONAL"],
    ["an unknown value", "SOMETHING", bodyOf("Hi {{who}}"), "NAMED"],
  ];
  for (const [what, parameterFormat, components, want] of cases) {
    assert.equal(
      parameterFormatOf({
        components,
        parameterFormat: parameterFormat as string | undefined,
      }),
      want,
      what,
    );
  }
});

Deno.test("a definition of any shape is read without throwing, and what it does not know passes", () => {
  const odd: unknown[][] = [
    [null, 5, "BODY", []],
    [{ type: "BODY" }, { type: "BUTTONS", buttons: "none" }],
    [{ type: "BODY", text: 7 }, { type: "HEADER", format: 3 }],
    [{ type: "HEADER", format: "PRODUCT" }, {
      type: "BUTTONS",
      buttons: [null, { type: "SPM" }, { type: "VOICE_CALL" }],
    }],
  ];
  for (const components of odd) {
    const plan = templatePlan({ components });
    // The body has no text to count and the header is of an unknown format.
    const problems = templateSendProblems(
      plan,
      parsedComponents([header(text("x")), body(text("y"))]),
    );
    assert.ok(Array.isArray(problems));
  }
  const product = templatePlan({ components: odd[3]! });
  assert.deepEqual(product.header, { kind: "unchecked", format: "PRODUCT" });
  assert.deepEqual(
    product.buttons.map((b) => b.kind),
    ["unchecked", "unchecked", "static"],
  );
  assert.equal(templatePlan({ components: odd[1]! }).body, null);
});

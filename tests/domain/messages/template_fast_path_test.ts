// parseSendMessage reads the common template send without zod
// (fastTemplateSend); wherever that answers, it must be zod's answer, key
// order included (the content is stored as JSON), and whatever zod refuses
// it must leave to zod, so the errors stay zod's.
import assert from "node:assert/strict";
import fc from "fast-check";
import { SendMessageBody } from "../../../src/domain/messages/outbound_schema.ts";
import { fastTemplateSend } from "../../../src/domain/messages/template_fast_path.ts";
import { parseSendMessage } from "../../../src/domain/messages/outbound.ts";

const CHANNEL = "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b";

/** Strings around the schema's bounds, and values of the wrong type. */
const text = (max: number) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.string({ maxLength: 4 }) },
    fc.constantFrom("", "a", "x".repeat(max), "x".repeat(max + 1), "ñ"),
    fc.constantFrom(5, null, true, [], {}),
  );

const parameter = fc.oneof(
  {
    weight: 30,
    arbitrary: fc.record({ type: fc.constant("text"), text: text(1024) }),
  },
  fc.record({
    type: fc.constantFrom("text", "TEXT", "payload"),
    text: text(1024),
  }),
  fc.record(
    {
      type: fc.constant("text"),
      text: text(1024),
      parameter_name: fc.constantFrom("first", "Bad"),
    },
    { requiredKeys: ["type"] },
  ),
  fc.record({ type: fc.constant("payload"), payload: fc.string() }),
  fc.constantFrom(null, "text", 1),
);

const component = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record({
      type: fc.constantFrom("body", "BODY", "Body", "header", "button"),
      parameters: fc.array(parameter, { maxLength: 3 }),
    }),
  },
  fc.record(
    {
      type: fc.constantFrom("body", "footer", "BODY ", "bodY", 7),
      parameters: fc.oneof(
        fc.array(parameter, { maxLength: 3 }),
        fc.constant(
          Array.from({ length: 101 }, () => ({ type: "text", text: "a" })),
        ),
        fc.constant(
          Array.from({ length: 100 }, () => ({ type: "text", text: "a" })),
        ),
        fc.constant("none"),
      ),
      sub_type: fc.constantFrom("url", "quick_reply", "other"),
      index: fc.constantFrom(0, "1", 10, "x"),
      extra: fc.constant(1),
    },
    { requiredKeys: [] },
  ),
  fc.constantFrom(null, [], "body"),
);

const components = fc.oneof(
  { weight: 20, arbitrary: fc.array(component, { maxLength: 3 }) },
  fc.constant(
    Array.from({ length: 21 }, () => ({ type: "body", parameters: [] })),
  ),
  fc.constant(
    Array.from({ length: 20 }, () => ({ type: "body", parameters: [] })),
  ),
  fc.constantFrom(null, {}, "body"),
);

const templateFields = {
  name: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("order_update", "a", "x9_") },
    fc.constantFrom(
      "",
      "Order",
      "order-update",
      "x".repeat(512),
      "x".repeat(513),
      3,
    ),
  ),
  language: fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record({ code: fc.constantFrom("es_AR", "en", "spa") }),
    },
    fc.record({ code: fc.constantFrom("es_ar", "EN", "es_ARG", "e", "", 5) }),
    fc.record({
      code: fc.constant("es"),
      policy: fc.constantFrom("deterministic", "other"),
    }),
    fc.record({ code: fc.constant("es"), extra: fc.constant(1) }),
    fc.constantFrom("es_AR", null),
  ),
  components,
};

const template = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(templateFields, {
      requiredKeys: ["name", "language"],
    }),
  },
  fc.record({ ...templateFields, extra: fc.constant(true) }, {
    requiredKeys: [],
  }),
  fc.constantFrom(null, "order_update", [], 1),
);

const item = fc.record(
  {
    phoneNumberId: fc.oneof(
      { weight: 8, arbitrary: fc.constant(CHANNEL) },
      fc.constantFrom("not-a-uuid", 12, null),
    ),
    to: fc.oneof(
      {
        weight: 4,
        arbitrary: fc.constantFrom("+5491122334455", "US.13491208655302741918"),
      },
      text(160),
    ),
    clientRef: text(256),
    type: fc.oneof(
      { weight: 8, arbitrary: fc.constant("template") },
      fc.constantFrom("text", "TEMPLATE", 1),
    ),
    template,
    metadata: fc.constantFrom({}, { origin: "crm" }, { sentByAi: "yes" }),
    text: fc.constant({ body: "hi" }),
    extra: fc.constant(0),
  },
  { requiredKeys: ["phoneNumberId", "to", "type", "template"] },
).map((raw) => {
  // Mostly the shape a campaign sends: drop the keys a template send lacks.
  const { metadata: _m, text: _t, extra: _e, ...common } = raw;
  return { full: raw, common };
});

Deno.test("fastTemplateSend answers only what zod accepts, with zod's value and key order", () => {
  let answered = 0;
  let runs = 0;
  fc.assert(
    fc.property(item, fc.boolean(), ({ full, common }, useFull) => {
      runs++;
      const input: Record<string, unknown> = useFull ? full : common;
      const fast = fastTemplateSend(structuredClone(input));
      if (fast === undefined) return;
      answered++;
      const zod = SendMessageBody.safeParse(input);
      assert.ok(zod.success, JSON.stringify(input));
      assert.equal(JSON.stringify(fast), JSON.stringify(zod.data));
      assert.deepStrictEqual(fast, zod.data);
    }),
    { numRuns: 5_000 },
  );
  // Not vacuous: a good share of the drawn items take the fast path (about
  // 6 %; the draws are unseeded, and one run gave 246 of 5,000, so the floor
  // sits well below that: 125 answers compared with zod are still plenty).
  assert.ok(answered > runs / 40, `${answered} of ${runs}`);
});

Deno.test("parseSendMessage gives a campaign item zod's value and refuses the near misses with zod's errors", () => {
  const good = {
    to: "+5491122334455",
    type: "template",
    clientRef: "ref-1",
    template: {
      name: "order_update",
      language: { code: "es_AR" },
      components: [{
        type: "BODY",
        parameters: [{ type: "text", text: "Ana" }, {
          type: "text",
          text: "#1",
        }],
      }],
    },
  };
  assert.ok(fastTemplateSend({ ...good, phoneNumberId: CHANNEL }));
  const parsed = parseSendMessage(good, { defaultPhoneNumberId: CHANNEL });
  const zod = SendMessageBody.safeParse({ ...good, phoneNumberId: CHANNEL });
  assert.ok(parsed.ok && zod.success);
  assert.equal(JSON.stringify(parsed.value), JSON.stringify(zod.data));
  const misses = [
    { ...good, template: { ...good.template, name: "Order" } },
    { ...good, template: { ...good.template, language: { code: "es-AR" } } },
    { ...good, to: "" },
    { ...good, clientRef: "x".repeat(257) },
    {
      ...good,
      template: {
        ...good.template,
        components: [{ type: "footer", parameters: [] }],
      },
    },
    {
      ...good,
      template: {
        ...good.template,
        components: [{
          type: "body",
          parameters: [{ type: "text", text: "" }],
        }],
      },
    },
  ];
  for (const miss of misses) {
    assert.equal(
      fastTemplateSend({ ...miss, phoneNumberId: CHANNEL }),
      undefined,
    );
    const result = parseSendMessage(miss, { defaultPhoneNumberId: CHANNEL });
    const zodMiss = SendMessageBody.safeParse({
      ...miss,
      phoneNumberId: CHANNEL,
    });
    assert.ok(!result.ok && !zodMiss.success, JSON.stringify(miss));
    assert.equal(result.problem.code, "VALIDATION_ERROR");
    assert.equal(
      result.problem.details?.[0]?.message,
      zodMiss.error.issues[0]?.message,
    );
  }
});

// Template sends checked against the template before anything is queued, on
// every path (POST /messages, its fast path for text bodies, the batch), and
// the Graph request of a valid one read at the simulator.
import assert from "node:assert/strict";
import { ENGINES } from "../_harness.ts";
import { newId } from "../../src/ids.ts";
import { toDbTime } from "../../src/db/time.ts";
import { insertTemplate } from "../../src/domain/templates/template_repo.ts";
import type { TemplateComponent } from "../../src/domain/templates/template.ts";
import {
  CAROUSEL,
  CATALOG,
  mediaHeader,
  NAMED,
  OFFER,
  ORDER,
  OTP,
  type TemplateFixture,
  text,
} from "../_support/template_fixtures.ts";
import {
  countRows,
  type Json,
  messagingTest,
  type Mh,
  newPhone,
  send,
  simSendsOf,
} from "./_helpers.ts";

const IMAGE = mediaHeader("IMAGE", {
  type: "image",
  image: { link: "https://cdn.example/sale.jpg" },
});
const FIXTURES = [ORDER, NAMED, OTP, OFFER, CAROUSEL, CATALOG, IMAGE];

/** Stores the fixtures as a sync from Meta would: approved, components as Meta gives them. */
async function seedFixtures(h: Mh): Promise<void> {
  for (const f of FIXTURES) {
    await insertTemplate(h.container.db, {
      id: newId(),
      accountId: h.tenant.account.id,
      channelId: null,
      metaTemplateId: String(1_000_000 + FIXTURES.indexOf(f)),
      name: f.name,
      language: "en_US",
      category: f.category,
      status: "approved",
      components: f.components as TemplateComponent[],
      createdAt: toDbTime(h.clock.now()),
    });
  }
}

function templateSend(
  fixture: TemplateFixture,
  components: unknown[] | undefined,
  to = newPhone(),
): Record<string, unknown> {
  return {
    to,
    type: "template",
    template: {
      name: fixture.name,
      language: { code: "en_US" },
      ...(components ? { components } : {}),
    },
  };
}

/** One row per kind of mismatch, the first problem as the API names it. */
const MISMATCHES: [string, TemplateFixture, unknown[] | undefined, string][] = [
  [
    "a text body short of a parameter (the fast path)",
    ORDER,
    [ORDER.valid[0], { type: "body", parameters: [text("Ana")] }],
    'Cannot send template "order_shipped" (en_US): template.components[1] (body): parameters {{2}}, {{3}} are missing: the template\'s body expects 3 parameter(s), got 1',
  ],
  [
    "no components for a template that takes some",
    ORDER,
    undefined,
    'Cannot send template "order_shipped" (en_US): template.components (header): parameter {{1}} is missing: the template\'s header expects 1 parameter(s), got 0',
  ],
  [
    "a named parameter missing",
    NAMED,
    [NAMED.valid[0], {
      type: "body",
      parameters: [text("Jessica", "first_name")],
    }],
    'Cannot send template "order_confirmation" (en_US): template.components[1] (body): parameter "order_number" is missing',
  ],
  [
    "positional parameters for a named template",
    NAMED,
    [NAMED.valid[0], { type: "body", parameters: [text("a"), text("b")] }],
    'Cannot send template "order_confirmation" (en_US): template.components[1].parameters[0] (body): "parameter_name" is missing: the template\'s parameters are named ("first_name", "order_number")',
  ],
  [
    "a video for an image header",
    IMAGE,
    [{ type: "header", parameters: [{ type: "video", video: { id: "1" } }] }],
    'Cannot send template "promo_image" (en_US): template.components[0].parameters[0] (header): parameter is "video", but the template\'s header is IMAGE: give one "image" parameter',
  ],
  [
    "a URL button left out",
    ORDER,
    ORDER.valid.filter((_, i) => i !== 3),
    'Cannot send template "order_shipped" (en_US): template.components (button 1): parameter "text" is missing: the template\'s URL button 1 ("https://shop.example/track/{{1}}") takes one; send it with sub_type "url" and index "1"',
  ],
  [
    "a quick reply sent as a copy code",
    ORDER,
    [...ORDER.valid.slice(0, 2), {
      type: "button",
      sub_type: "copy_code",
      index: 0,
      parameters: [{ type: "coupon_code", coupon_code: "X" }],
    }, ...ORDER.valid.slice(3)],
    'Cannot send template "order_shipped" (en_US): template.components[2] (button 0): sub_type "copy_code" does not match the template\'s button 0, a QUICK_REPLY button: use sub_type "quick_reply"',
  ],
];

for (const engine of ENGINES) {
  messagingTest(
    `[${engine}] POST /messages refuses a template send that does not fit its template with 400 VALIDATION_ERROR naming the component and the parameter, and queues nothing`,
    async (h) => {
      await seedFixtures(h);
      for (const [what, fixture, components, message] of MISMATCHES) {
        const res = await send(h, templateSend(fixture, components));
        assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error.code, "VALIDATION_ERROR", what);
        assert.equal(res.body.error.message, message, what);
        assert.ok(
          res.body.error.message.endsWith(res.body.error.details[0].message),
          what,
        );
      }
      assert.equal(await countRows(h, "messages"), 0);
      assert.equal(await countRows(h, "contacts"), 0);
      for (const fixture of FIXTURES) {
        const res = await send(h, templateSend(fixture, fixture.valid));
        assert.equal(
          res.status,
          201,
          `${fixture.name}: ${JSON.stringify(res.body)}`,
        );
      }
      assert.equal(await countRows(h, "messages"), FIXTURES.length);
    },
    { engine },
  );

  messagingTest(
    `[${engine}] POST /messages/batch fails a template item that does not fit alone, with its own error`,
    async (h) => {
      await seedFixtures(h);
      const items = [
        templateSend(ORDER, ORDER.valid),
        ...MISMATCHES.map(([, fixture, components]) =>
          templateSend(fixture, components)
        ),
        templateSend(NAMED, NAMED.valid),
      ];
      const res = await h.request("POST", "/api/v2/messages/batch", {
        body: { defaultPhoneNumberId: h.tenant.channel.id, messages: items },
      });
      assert.equal(res.status, 202, JSON.stringify(res.body));
      const results = res.body.data.items as Json[];
      assert.deepEqual(
        results.map((i) => i.result),
        ["queued", ...MISMATCHES.map(() => "failed"), "queued"],
      );
      MISMATCHES.forEach(([what, , , message], n) => {
        assert.deepEqual(
          results[n + 1]!.error,
          { code: "VALIDATION_ERROR", message },
          what,
        );
      });
      assert.equal(await countRows(h, "messages"), 2);
    },
    { engine },
  );
}

messagingTest(
  "the Graph request of a valid template send carries exactly what Meta expects",
  async (h) => {
    await seedFixtures(h);
    const to = newPhone();
    // The API takes Meta's index as a number and sub_type in any case.
    const given = structuredClone(ORDER.valid) as Json[];
    given[2] = { ...given[2], sub_type: "QUICK_REPLY", index: 0 };
    given[3] = { ...given[3], index: 1 };
    const orderId = (await send(h, templateSend(ORDER, given, to))).body.data
      .id;
    const namedId = (await send(h, templateSend(NAMED, NAMED.valid, to))).body
      .data.id;
    const imageId = (await send(h, templateSend(IMAGE, IMAGE.valid, to))).body
      .data.id;
    for (const id of [orderId, namedId, imageId]) {
      const message = await h.waitForStatus(id, ["read", "failed"]);
      assert.equal(message.status, "read", JSON.stringify(message));
    }
    const expected = (
      id: string,
      fixture: TemplateFixture,
    ): Record<string, unknown> => ({
      messaging_product: "whatsapp",
      recipient_type: "individual",
      to: to.slice(1),
      type: "template",
      template: {
        name: fixture.name,
        language: { code: "en_US" },
        components: fixture.valid,
      },
      biz_opaque_callback_data: id,
    });
    for (
      const [id, fixture] of [
        [orderId, ORDER],
        [namedId, NAMED],
        [imageId, IMAGE],
      ] as const
    ) {
      const sends = await simSendsOf(h, id);
      assert.equal(sends.length, 1);
      assert.deepEqual(sends[0].body, expected(id, fixture), fixture.name);
    }
  },
);

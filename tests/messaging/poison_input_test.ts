// Poison input: free-form JSON fields at their bounds are stored and shown by
// every endpoint; past the bounds (or nested 100,000 deep) they are a 400,
// never a stored row that breaks the reads and the send job afterwards.
import assert from "node:assert/strict";
import { ENGINES, engineTest, type Harness } from "../_harness.ts";
import {
  customerWrites,
  type Json,
  messagingTest,
  newPhone,
  seedTemplate,
  send,
  templateTo,
} from "./_helpers.ts";
import { startReceiver } from "../_support/webhooks.ts";
import {
  MAX_CUSTOM_FIELD_KEY_LENGTH,
  MAX_CUSTOM_FIELD_VALUE_LENGTH,
  MAX_CUSTOM_FIELDS,
} from "../../src/domain/contacts/contact.ts";
import {
  jsonDepth,
  MAX_JSON_BYTES,
  MAX_JSON_DEPTH,
} from "../../src/domain/json_bounds.ts";

/** An object nested exactly `depth` levels whose JSON is exactly `bytes` bytes (ASCII). */
function shape(depth: number, bytes: number): Record<string, unknown> {
  const build = (fill: string) => {
    let v: Record<string, unknown> = { fill };
    for (let i = 1; i < depth; i++) v = { n: v };
    return v;
  };
  const base = JSON.stringify(build("")).length;
  return build("x".repeat(bytes - base));
}

/**
 * JSON text of `body` with `levels` nested objects in place of the string
 * "DEEP" (the poison body): written by hand, as JSON.stringify would
 * overflow the test's own stack.
 */
function withAbyss(body: unknown, levels: number): string {
  const deep = '{"a":'.repeat(levels) + "{}" + "}".repeat(levels);
  return JSON.stringify(body).replace('"DEEP"', deep);
}

const WORST = shape(MAX_JSON_DEPTH, MAX_JSON_BYTES);

/** customFields with every limit at its maximum: most keys, longest keys and values. */
function widestCustomFields(char = "v"): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let i = 0; i < MAX_CUSTOM_FIELDS; i++) {
    const key = `k${i}`.padEnd(MAX_CUSTOM_FIELD_KEY_LENGTH, "_");
    fields[key] = char.repeat(MAX_CUSTOM_FIELD_VALUE_LENGTH);
  }
  return fields;
}

function flow(data: unknown): Record<string, unknown> {
  return {
    type: "flow",
    body: { text: "Completá el formulario" },
    action: {
      name: "flow",
      parameters: {
        flow_message_version: "3",
        flow_id: "1234567890",
        flow_cta: "Abrir",
        flow_action: "navigate",
        flow_action_payload: { screen: "START", data },
      },
    },
  };
}

/** The greeting template as Meta defines one with a flow button. */
const GREETING_WITH_FLOW = [
  { type: "BODY", text: "Hola {{1}}" },
  {
    type: "BUTTONS",
    buttons: [{
      type: "FLOW",
      text: "Abrir",
      flow_id: "1234567890",
      flow_action: "navigate",
      navigate_screen: "START",
    }],
  },
];

/** The greeting template plus a flow button carrying `data` as flow_action_data. */
function templateWithFlowButton(to: string, data: unknown) {
  const body = templateTo(to) as Json;
  body.template.components.push({
    type: "button",
    sub_type: "flow",
    index: 0,
    parameters: [{ type: "action", action: { flow_action_data: data } }],
  });
  return body;
}

const FLOW_DATA_PATH = "interactive.action.parameters.flow_action_payload.data";
const ACTION_DATA_PATH = "template.components.1.parameters.0.action" +
  ".flow_action_data";

Deno.test("the worst accepted shapes sit exactly at the bounds", () => {
  assert.equal(jsonDepth(WORST), MAX_JSON_DEPTH);
  assert.equal(JSON.stringify(WORST).length, MAX_JSON_BYTES);
});

async function getOk(h: Harness, path: string): Promise<Json> {
  const res = await h.request("GET", `/api/v2${path}`);
  assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Every page of GET /events, following meta.cursor until a page is empty. */
async function allEvents(h: Harness): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | null = null;
  for (;;) {
    const q: string = cursor ? `&cursor=${cursor}` : "";
    const body = await getOk(h, `/events?limit=5${q}`);
    items.push(...body.data);
    if (body.data.length === 0) return items;
    cursor = body.meta.cursor;
  }
}

for (const engine of ENGINES) {
  messagingTest(
    `[${engine}] the worst free-form shapes that pass validation are stored by every write route, sent upstream, and every endpoint showing them answers 200`,
    async (h) => {
      const receiver = startReceiver();
      try {
        const hook = await h.request("POST", "/api/v2/webhooks", {
          body: { url: receiver.url, events: ["message.status_changed"] },
        });
        assert.equal(hook.status, 201, JSON.stringify(hook.body));
        const phone = newPhone();
        const { message: inbound } = await customerWrites(h, phone);
        await seedTemplate(h, { components: GREETING_WITH_FLOW });

        // Writes: every route that accepts a free-form field, at its bounds.
        const posted = await h.request("POST", "/api/v2/contacts", {
          body: { phoneNumber: newPhone(), customFields: widestCustomFields() },
        });
        assert.equal(posted.status, 201, JSON.stringify(posted.body));
        const contactId = posted.body.data.id;
        const patched = await h.request(
          "PATCH",
          `/api/v2/contacts/${contactId}`,
          { body: { customFields: widestCustomFields("w") } },
        );
        assert.equal(patched.status, 200, JSON.stringify(patched.body));
        const flowSend = {
          to: phone,
          type: "interactive",
          interactive: flow(WORST),
        };
        const single = await send(h, flowSend, {
          "Idempotency-Key": "worst-1",
        });
        assert.equal(single.status, 201, JSON.stringify(single.body));
        const replay = await send(h, flowSend, {
          "Idempotency-Key": "worst-1",
        });
        assert.equal(replay.status, 201);
        assert.equal(replay.headers.get("idempotent-replayed"), "true");
        const tpl = await send(h, templateWithFlowButton(phone, WORST));
        assert.equal(tpl.status, 201, JSON.stringify(tpl.body));
        const batch = await h.request("POST", "/api/v2/messages/batch", {
          body: {
            defaultPhoneNumberId: h.tenant.channel.id,
            messages: [flowSend, templateWithFlowButton(phone, WORST)],
          },
          headers: { "Idempotency-Key": "worst-batch" },
        });
        assert.equal(batch.status, 202, JSON.stringify(batch.body));
        assert.equal(batch.body.data.accepted, 2, JSON.stringify(batch.body));
        const ids = [
          single.body.data.id,
          tpl.body.data.id,
          ...batch.body.data.items.map((i: Json) => i.message.id),
        ];

        // The send job serializes them for the Graph API: each one leaves queued for sent.
        for (const id of ids) {
          const m = await h.waitForStatus(id, [
            "sent",
            "delivered",
            "read",
            "failed",
          ]);
          assert.notEqual(m.status, "failed", JSON.stringify(m));
        }

        // Reads: every endpoint that shows the stored shapes.
        const [flowId, tplId] = ids;
        const flowMsg = (await getOk(h, `/messages/${flowId}`)).data;
        assert.deepEqual(
          flowMsg.content.action.parameters.flow_action_payload.data,
          WORST,
        );
        const tplMsg = (await getOk(h, `/messages/${tplId}`)).data;
        assert.deepEqual(
          tplMsg.content.components[1].parameters[0].action.flow_action_data,
          WORST,
        );
        const conv = inbound.conversationId;
        let shown = 0;
        let cursor: string | null = null;
        do {
          const q: string = cursor ? `&cursor=${cursor}` : "";
          const page = await getOk(
            h,
            `/conversations/${conv}/messages?limit=2${q}`,
          );
          shown += page.data.length;
          cursor = page.meta.cursor ?? null;
        } while (cursor);
        assert.equal(shown, ids.length + 1);
        await getOk(h, `/conversations/${conv}`);
        await getOk(h, "/conversations");
        await getOk(h, `/contacts/${inbound.contactId}/conversations`);
        const contact = (await getOk(h, `/contacts/${contactId}`)).data;
        assert.deepEqual(contact.customFields, widestCustomFields("w"));
        const list = (await getOk(h, "/contacts?pageSize=100")).data;
        assert.ok(list.some((c: Json) => c.id === contactId));
        const events = await allEvents(h);
        const flowEvent = events.find((e) =>
          e.type === "message.status_changed" && e.data.id === flowId
        );
        assert.deepEqual(
          flowEvent?.data.content.action.parameters.flow_action_payload.data,
          WORST,
        );

        // Webhooks: the signed deliveries carry the same data, and the log reads.
        const delivered = await h.until(
          () => receiver.received.find((r) => r.json?.data?.id === flowId),
          "a webhook delivery about the flow message",
        );
        assert.deepEqual(
          delivered.json.data.content.action.parameters.flow_action_payload
            .data,
          WORST,
        );
        await getOk(h, `/webhooks/${hook.body.data.id}/deliveries`);
      } finally {
        await receiver.stop();
      }
    },
    { engine },
  );
}

engineTest(
  "free-form fields past their depth or size bound are 400 VALIDATION_ERROR naming the field",
  async (h) => {
    const to = "+5491122334455";
    const channel = h.tenant.channel.id;
    const cases: [string, Record<string, unknown>, string][] = [
      [
        "/api/v2/messages",
        {
          phoneNumberId: channel,
          to,
          type: "interactive",
          interactive: flow(shape(MAX_JSON_DEPTH + 1, 400)),
        },
        FLOW_DATA_PATH,
      ],
      [
        "/api/v2/messages",
        {
          phoneNumberId: channel,
          to,
          type: "interactive",
          interactive: flow(shape(2, MAX_JSON_BYTES + 1)),
        },
        FLOW_DATA_PATH,
      ],
      [
        "/api/v2/messages",
        {
          phoneNumberId: channel,
          ...templateWithFlowButton(to, shape(MAX_JSON_DEPTH + 1, 400)),
        },
        ACTION_DATA_PATH,
      ],
      [
        "/api/v2/messages",
        {
          phoneNumberId: channel,
          ...templateWithFlowButton(to, shape(2, MAX_JSON_BYTES + 1)),
        },
        ACTION_DATA_PATH,
      ],
      [
        "/api/v2/contacts",
        { phoneNumber: to, customFields: widestCustomFields("é") },
        "customFields",
      ],
    ];
    for (const [path, body, field] of cases) {
      const res = await h.request("POST", path, { body });
      assert.equal(res.status, 400, `${field}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, "VALIDATION_ERROR");
      assert.match(res.body.error.message, new RegExp(`"${field}"`));
    }
    const contact = await h.request("POST", "/api/v2/contacts", {
      body: { phoneNumber: to },
    });
    const patch = await h.request(
      "PATCH",
      `/api/v2/contacts/${contact.body.data.id}`,
      {
        body: { customFields: widestCustomFields("é") },
      },
    );
    assert.equal(patch.status, 400);
    assert.match(patch.body.error.message, /"customFields": must be at most/);

    const batch = await h.request("POST", "/api/v2/messages/batch", {
      body: {
        defaultPhoneNumberId: channel,
        messages: [{
          to,
          type: "interactive",
          interactive: flow(shape(MAX_JSON_DEPTH + 1, 400)),
        }],
      },
    });
    assert.equal(batch.status, 202);
    const item = batch.body.data.items[0];
    assert.equal(item.result, "failed");
    assert.equal(item.error.code, "VALIDATION_ERROR");
    assert.match(item.error.message, new RegExp(`"${FLOW_DATA_PATH}"`));
    const stored = await h.container.db.selectFrom("messages").select("id")
      .execute();
    assert.equal(stored.length, 0);
  },
);

engineTest(
  "a body nested 100,000 levels deep is a 400 with or without Idempotency-Key, and a batch item that deep fails alone",
  async (h) => {
    const to = "+5491122334455";
    const post = (path: string, rawBody: string, key?: string) =>
      h.request("POST", `/api/v2${path}`, {
        rawBody,
        headers: {
          "content-type": "application/json",
          ...(key ? { "Idempotency-Key": key } : {}),
        },
      });
    const sendBody = withAbyss({
      phoneNumberId: h.tenant.channel.id,
      to,
      type: "interactive",
      interactive: flow("DEEP"),
    }, 100_000);
    for (const key of [undefined, "deep-1"]) {
      const res = await post("/messages", sendBody, key);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.match(res.body.error.message, new RegExp(`"${FLOW_DATA_PATH}"`));
    }
    // An error message never echoes the poison back.
    const typed = await post(
      "/messages",
      withAbyss(
        { phoneNumberId: h.tenant.channel.id, to, type: "DEEP" },
        100_000,
      ),
    );
    assert.equal(typed.status, 400);
    assert.equal(typed.body.error.code, "INVALID_MESSAGE_TYPE");
    assert.ok(typed.body.error.message.length < 200, typed.body.error.message);
    // A batch is hashed for its key before its items are validated.
    const batchBody = withAbyss({
      defaultPhoneNumberId: h.tenant.channel.id,
      messages: [{ to, type: "interactive", interactive: flow("DEEP") }],
    }, 100_000);
    for (const replayed of [null, "true"]) {
      const res = await post("/messages/batch", batchBody, "deep-batch");
      assert.equal(res.status, 202, JSON.stringify(res.body));
      assert.equal(res.body.data.items[0].result, "failed");
      assert.equal(res.headers.get("idempotent-replayed"), replayed);
    }
    const contact = await post(
      "/contacts",
      withAbyss({ phoneNumber: to, customFields: { a: "DEEP" } }, 100_000),
    );
    assert.equal(contact.status, 400, JSON.stringify(contact.body));
    assert.match(contact.body.error.message, /"customFields\.a"/);
  },
);

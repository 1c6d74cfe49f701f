// NUL (U+0000) in what a client sends is refused, naming the field: on
// SQLite a string holding one was stored whole and read back cut ("r\u0000s"
// came back "r"). One row per stored text field of the API (and the query and
// path strings), on both engines like the lone-surrogate rule.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { createTemplate } from "../../src/domain/templates/template_service.ts";
import { toDbTime } from "../../src/db/time.ts";
import { insertConversation } from "./_conversation_fixtures.ts";

const PHONE = "+5491155001199";
const HOOK = "http://127.0.0.1:9/hook";

interface Row {
  what: string;
  method: string;
  path: string;
  body?: unknown;
  /** The field the error names, as the message quotes it. */
  field: string;
  /** The rule that refuses it, when not the NUL rule (refused before too). */
  why?: RegExp;
}

interface Fixture {
  contactId: string;
  channelId: string;
  webhookId: string;
  panelWebhookId: string;
}

function send(f: Fixture, message: Record<string, unknown>) {
  return { phoneNumberId: f.channelId, to: PHONE, ...message };
}

function flow(f: Fixture, data: Record<string, unknown>) {
  return send(f, {
    type: "interactive",
    interactive: {
      type: "flow",
      body: { text: "Book" },
      action: {
        name: "flow",
        parameters: {
          flow_message_version: "3",
          flow_id: "1234",
          flow_cta: "Open",
          flow_action: "navigate",
          flow_action_payload: { screen: "START", data },
        },
      },
    },
  });
}

function template(f: Fixture, parameter: Record<string, unknown>) {
  return send(f, {
    type: "template",
    template: {
      name: "order_update",
      language: { code: "es_AR" },
      components: [{ type: "body", parameters: [parameter] }],
    },
  });
}

function rows(f: Fixture): Row[] {
  const contact = `/api/v2/contacts/${f.contactId}`;
  const webhook = `/api/v2/webhooks/${f.webhookId}`;
  const panel = "/api/v1/webhook-subscriptions";
  const msg = "/api/v2/messages";
  return [
    // Contacts
    {
      what: "a contact's name",
      method: "POST",
      path: "/api/v2/contacts",
      body: { phoneNumber: "+5491155001198", name: "\u0000nul" },
      field: "name",
    },
    {
      what: "a contact's phone number",
      method: "POST",
      path: "/api/v2/contacts",
      body: { phoneNumber: "+54911550011\u000097" },
      field: "phoneNumber",
    },
    {
      what: "a contact's e-mail",
      method: "POST",
      path: "/api/v2/contacts",
      body: { phoneNumber: "+5491155001196", email: "a\u0000@example.com" },
      field: "email",
      why: /must be an e-mail address/,
    },
    {
      what: "a contact's tag",
      method: "POST",
      path: "/api/v2/contacts",
      body: { phoneNumber: "+5491155001195", tags: ["vip", "a\u0000b"] },
      field: "tags.1",
    },
    {
      what: "a custom field's value",
      method: "POST",
      path: "/api/v2/contacts",
      body: { phoneNumber: "+5491155001194", customFields: { x: "a\u0000" } },
      field: "customFields.x",
    },
    {
      what: "a custom field's key",
      method: "POST",
      path: "/api/v2/contacts",
      body: { phoneNumber: "+5491155001193", customFields: { "a\u0000b": 1 } },
      field: "customFields.a\\u0000b",
    },
    {
      what: "a contact's new name",
      method: "PATCH",
      path: contact,
      body: { name: "An\u0000a" },
      field: "name",
    },
    {
      what: "a contact's new custom field",
      method: "PATCH",
      path: contact,
      body: { customFields: { crm: "\u0000" } },
      field: "customFields.crm",
    },
    // Messages (parsed by the domain, the template fast path included)
    {
      what: "a message's clientRef",
      method: "POST",
      path: msg,
      body: send(f, {
        type: "text",
        text: { body: "hi" },
        clientRef: "r\u0000s",
      }),
      field: "clientRef",
    },
    {
      what: "a message's recipient",
      method: "POST",
      path: msg,
      body: send(f, {
        to: "+549115500\u00001199",
        type: "text",
        text: { body: "hi" },
      }),
      field: "to",
    },
    {
      what: "a text body",
      method: "POST",
      path: msg,
      body: send(f, { type: "text", text: { body: "a\u0000b" } }),
      field: "text.body",
    },
    {
      what: "an image caption",
      method: "POST",
      path: msg,
      body: send(f, {
        type: "image",
        image: { link: "https://cdn.example.com/a.jpg", caption: "\u0000" },
      }),
      field: "image.caption",
    },
    {
      what: "a media id",
      method: "POST",
      path: msg,
      body: send(f, { type: "audio", audio: { id: "12\u000034" } }),
      field: "audio.id",
    },
    {
      what: "a document's file name",
      method: "POST",
      path: msg,
      body: send(f, {
        type: "document",
        document: { id: "1234", filename: "a\u0000.pdf" },
      }),
      field: "document.filename",
    },
    {
      what: "a template's text parameter (the fast path)",
      method: "POST",
      path: msg,
      body: template(f, { type: "text", text: "Ana\u0000" }),
      field: "template.components.0.parameters.0.text",
    },
    {
      what: "a template's currency fallback",
      method: "POST",
      path: msg,
      body: template(f, {
        type: "currency",
        currency: { fallback_value: "$1\u0000", code: "USD", amount_1000: 1 },
      }),
      field: "template.components.0.parameters.0.currency.fallback_value",
    },
    {
      what: "a template flow button's action data",
      method: "POST",
      path: msg,
      body: template(f, {
        type: "action",
        action: { flow_token: "t", flow_action_data: { step: ["x\u0000"] } },
      }),
      field:
        "template.components.0.parameters.0.action.flow_action_data.step.0",
    },
    {
      what: "a reply button's title",
      method: "POST",
      path: msg,
      body: send(f, {
        type: "interactive",
        interactive: {
          type: "button",
          body: { text: "Pick" },
          action: {
            buttons: [{ type: "reply", reply: { id: "y", title: "Y\u0000" } }],
          },
        },
      }),
      field: "interactive.action.buttons.0.reply.title",
    },
    {
      what: "a list row's description",
      method: "POST",
      path: msg,
      body: send(f, {
        type: "interactive",
        interactive: {
          type: "list",
          body: { text: "Pick" },
          action: {
            button: "Menu",
            sections: [{
              rows: [{ id: "r1", title: "Row", description: "\u0000" }],
            }],
          },
        },
      }),
      field: "interactive.action.sections.0.rows.0.description",
    },
    {
      what: "a key in a flow's data",
      method: "POST",
      path: msg,
      body: flow(f, { "k\u0000": 1 }),
      field: "interactive.action.parameters.flow_action_payload.data.k\\u0000",
    },
    {
      what: "a nested value in a flow's data",
      method: "POST",
      path: msg,
      body: flow(f, { a: { b: ["ok", "x\u0000"] } }),
      field: "interactive.action.parameters.flow_action_payload.data.a.b.1",
    },
    {
      what: "a reaction's message id",
      method: "POST",
      path: msg,
      body: send(f, {
        type: "reaction",
        reaction: { message_id: "wamid.\u0000", emoji: "👍" },
      }),
      field: "reaction.message_id",
    },
    // Webhook subscriptions and their panel aliases
    {
      what: "a webhook's url",
      method: "POST",
      path: "/api/v2/webhooks",
      body: { url: `${HOOK}\u0000`, events: ["contact.created"] },
      field: "url",
    },
    {
      what: "a webhook's description",
      method: "POST",
      path: "/api/v2/webhooks",
      body: { url: HOOK, events: ["contact.created"], description: "\u0000" },
      field: "description",
    },
    {
      what: "a custom header's name",
      method: "POST",
      path: "/api/v2/webhooks",
      body: {
        url: HOOK,
        events: ["contact.created"],
        headers: { "X-A\u0000": "1" },
      },
      field: "headers.X-A\u0000",
      why: /not a valid header name/,
    },
    {
      what: "a custom header's value",
      method: "POST",
      path: "/api/v2/webhooks",
      body: {
        url: HOOK,
        events: ["contact.created"],
        headers: { "X-A": "1\u0000" },
      },
      field: "headers.X-A",
      why: /control characters/,
    },
    {
      what: "a webhook's new description",
      method: "PATCH",
      path: webhook,
      body: { description: "CRM\u0000" },
      field: "description",
    },
    {
      what: "a panel subscription's description",
      method: "POST",
      path: panel,
      body: { url: HOOK, events: ["contact.created"], description: "\u0000" },
      field: "description",
    },
    {
      what: "a panel subscription's new url",
      method: "PATCH",
      path: `${panel}/${f.panelWebhookId}`,
      body: { url: `${HOOK}/\u0000` },
      field: "url",
    },
    // Query and path strings
    ...[
      ["/api/v2/contacts?search=a%00b", "search"],
      ["/api/v2/contacts?tag=%00", "tag"],
      ["/api/v2/conversations?search=%00", "search"],
      ["/api/v2/conversations/resolve?email=a%00b", "email"],
      ["/api/v1/conversations/resolve?instagram=%00", "instagram"],
      ["/api/v2/conversations/by-phone/%2B549%00", "phone"],
      ["/api/v2/templates/by-name/order%00update", "name"],
      ["/api/v2/events?type=contact.created%00", "type"],
      ["/api/v2/media/by-key?key=a%00b", "key"],
    ].map(([path, field]) => ({
      what: `GET ${path}`,
      method: "GET",
      path: path!,
      field: field!,
    })),
    {
      what: "an upstream message id in the path",
      method: "POST",
      path: "/api/v2/messages/wamid.a%00b/read",
      field: "waMessageId",
    },
  ];
}

async function fixture(h: Harness): Promise<Fixture> {
  const contact = await h.request("POST", "/api/v2/contacts", {
    body: { phoneNumber: PHONE, name: "Ana" },
  });
  const webhook = await h.request("POST", "/api/v2/webhooks", {
    body: { url: HOOK, events: ["contact.created"] },
  });
  const panel = await h.request("POST", "/api/v1/webhook-subscriptions", {
    body: { url: HOOK, events: ["contact.created"] },
  });
  for (const res of [contact, webhook, panel]) {
    assert.equal(res.status, 201, JSON.stringify(res.body));
  }
  // So that each send is refused for its NUL alone: the customer wrote a
  // minute ago (an open window) and the template is approved.
  await insertConversation(h, {
    contactId: contact.body.data.id,
    service_window_expires_at: toDbTime(
      new Date(h.clock.now().getTime() + 60_000),
    ),
  });
  await createTemplate(h.container, {
    accountId: h.tenant.account.id,
    name: "order_update",
    language: "es_AR",
    category: "UTILITY",
    status: "approved",
    components: [{ type: "BODY", text: "Hola {{1}}" }],
  });
  return {
    contactId: contact.body.data.id,
    channelId: h.tenant.channel.id,
    webhookId: webhook.body.data.id,
    panelWebhookId: panel.body.data.id,
  };
}

engineTest(
  "every string the API takes is refused with a NUL, naming the field, and nothing is stored",
  async (h) => {
    const f = await fixture(h);
    const counts = await rowCounts(h);
    for (const row of rows(f)) {
      const res = await h.request(row.method, row.path, { body: row.body });
      const label = `${row.what}: ${JSON.stringify(res.body)}`;
      assert.equal(res.status, 400, label);
      assert.equal(res.body.error.code, "VALIDATION_ERROR", label);
      const message: string = res.body.error.message;
      assert.ok(message.includes(`"${row.field}"`), label);
      assert.match(
        message,
        row.why ?? /must not contain a NUL character/,
        label,
      );
    }
    assert.deepEqual(
      await rowCounts(h),
      counts,
      "a refused request stored a row",
    );
  },
);

engineTest(
  "a batch item with a NUL fails alone, naming the field; the others are queued",
  async (h) => {
    const f = await fixture(h);
    const good = template(f, { type: "text", text: "Ana" });
    const res = await h.request("POST", "/api/v2/messages/batch", {
      body: {
        messages: [
          good,
          { ...good, clientRef: "r\u0000s" },
          flow(f, { "k\u0000": 1 }),
        ],
      },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const [first, second, third] = res.body.data.items;
    assert.equal(second.result, "failed");
    assert.equal(second.error.code, "VALIDATION_ERROR");
    assert.match(second.error.message, /"clientRef": must not contain a NUL/);
    assert.equal(third.result, "failed");
    assert.match(
      third.error.message,
      /"interactive\.action\.parameters\.flow_action_payload\.data\.k\\u0000"/,
    );
    assert.equal(first.result, "queued", JSON.stringify(first));
    assert.equal(res.body.data.accepted, 1);
  },
);

async function rowCounts(h: Harness): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of ["contacts", "messages", "webhooks"] as const) {
    const row = await h.container.db.selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    out[table] = Number(row.n);
  }
  return out;
}

import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { MessageSchema } from "../../src/http/schemas/message_schemas.ts";
import {
  MESSAGE_TYPES,
  toMessageView,
} from "../../src/domain/messages/message.ts";
import { toMessage } from "../../src/domain/messages/message_repo.ts";
import { insertMessage, insertThread } from "./_conversation_fixtures.ts";

const API = "/api/v2";

engineTest(
  "GET /conversations/:id/messages returns Messages in their wire shape",
  async (h) => {
    const thread = await insertThread(h, { phoneNumber: "+5491122334455" });
    const mediaId = crypto.randomUUID();
    const campaignId = crypto.randomUUID();
    const inbound = await insertMessage(h, {
      ...thread,
      content: { body: "Hola, ¿tienen stock?" },
      wa_message_id: "wamid.IN1",
      created_at: "2026-11-20T12:00:00.001Z",
    });
    const outbound = await insertMessage(h, {
      ...thread,
      direction: "outbound",
      type: "image",
      content: { link: "https://example.com/a.jpg", caption: "Catálogo" },
      status: "failed",
      wa_message_id: "wamid.OUT1",
      error_code: "131053",
      error_message: "Media upload error",
      origin: "external_api",
      sent_by_ai: 1,
      campaign_id: campaignId,
      client_ref: "order-77",
      media_id: mediaId,
      media_key: `${h.tenant.account.id}/2026/11/${mediaId}`,
      created_at: "2026-11-20T12:00:00.002Z",
    });
    const res = await h.request(
      "GET",
      `${API}/conversations/${thread.conversationId}/messages`,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, [
      {
        id: inbound,
        conversationId: thread.conversationId,
        contactId: thread.contactId,
        phoneNumberId: h.tenant.channel.id,
        direction: "inbound",
        type: "text",
        content: { text: "Hola, ¿tienen stock?" },
        status: "delivered",
        waMessageId: "wamid.IN1",
        errorCode: null,
        errorMessage: null,
        origin: "inbound",
        sentByAi: false,
        campaignId: null,
        clientRef: null,
        mediaId: null,
        mediaKey: null,
        agentId: null,
        context: null,
        forwarded: false,
        frequentlyForwarded: false,
        referral: null,
        edits: [],
        deletedAt: null,
        mediaError: null,
        createdAt: "2026-11-20T12:00:00.001Z",
      },
      {
        id: outbound,
        conversationId: thread.conversationId,
        contactId: thread.contactId,
        phoneNumberId: h.tenant.channel.id,
        direction: "outbound",
        type: "image",
        content: { link: "https://example.com/a.jpg", caption: "Catálogo" },
        status: "failed",
        waMessageId: "wamid.OUT1",
        errorCode: "131053",
        errorMessage: "Media upload error",
        origin: "external_api",
        sentByAi: true,
        campaignId,
        clientRef: "order-77",
        mediaId,
        mediaKey: `${h.tenant.account.id}/2026/11/${mediaId}`,
        agentId: null,
        context: null,
        forwarded: false,
        frequentlyForwarded: false,
        referral: null,
        edits: [],
        deletedAt: null,
        mediaError: null,
        createdAt: "2026-11-20T12:00:00.002Z",
      },
    ]);
    assert.deepEqual(res.body.meta, {
      requestId: res.body.meta.requestId,
      cursor: null,
      hasMore: false,
    });
    for (const item of res.body.data) MessageSchema.parse(item);
  },
);

engineTest(
  "GET /conversations/:id/messages shows each content kind by its type",
  async (h) => {
    const thread = await insertThread(h, { phoneNumber: "+5491122334455" });
    const card = {
      name: { formatted_name: "Ana" },
      phones: [{ phone: "+5491122334455", wa_id: "5491122334455" }],
    };
    const stored: [string, unknown, unknown][] = [
      [
        "location",
        { latitude: -34.6, longitude: -58.38, name: "Obelisco" },
        { latitude: -34.6, longitude: -58.38, name: "Obelisco" },
      ],
      ["contacts", [card], { contacts: [card] }],
      ["contacts", { contacts: [card] }, { contacts: [card] }],
      [
        "template",
        { name: "order_ready", language: { code: "es_AR" }, components: [] },
        { name: "order_ready", language: { code: "es_AR" }, components: [] },
      ],
      [
        "interactive",
        { type: "button_reply", button_reply: { id: "b1", title: "Sí" } },
        { type: "button_reply", button_reply: { id: "b1", title: "Sí" } },
      ],
      ["reaction", { message_id: "wamid.X", emoji: "👍" }, {
        message_id: "wamid.X",
        emoji: "👍",
      }],
      ["document", {
        id: "123",
        mime_type: "application/pdf",
        filename: "a.pdf",
      }, { id: "123", mime_type: "application/pdf", filename: "a.pdf" }],
      ["unsupported", {}, {}],
    ];
    for (const [type, content] of stored) {
      await insertMessage(h, { ...thread, type, content });
    }
    // A type the API does not document shows as unsupported, content kept.
    await insertMessage(h, {
      ...thread,
      type: "ephemeral",
      content: { note: "x" },
    });
    const res = await h.request(
      "GET",
      `${API}/conversations/${thread.conversationId}/messages`,
    );
    assert.equal(res.status, 200);
    const shown = res.body.data.map((m: { type: string; content: unknown }) => [
      m.type,
      m.content,
    ]);
    assert.deepEqual(shown, [
      ...stored.map(([type, , view]) => [type, view]),
      ["unsupported", { note: "x" }],
    ]);
    for (const item of res.body.data) MessageSchema.parse(item);
  },
);

Deno.test("MessageSchema accepts every message type the view produces", () => {
  for (const type of MESSAGE_TYPES) {
    const content = type === "text"
      ? JSON.stringify({ body: "hi" })
      : type === "location"
      ? JSON.stringify({ latitude: 1, longitude: 2 })
      : type === "contacts"
      ? JSON.stringify([])
      : type === "template"
      ? JSON.stringify({ name: "t" })
      : type === "interactive"
      ? JSON.stringify({ type: "button" })
      : "{}";
    const view = toMessageView(toMessage({
      id: crypto.randomUUID(),
      account_id: crypto.randomUUID(),
      conversation_id: crypto.randomUUID(),
      contact_id: crypto.randomUUID(),
      channel_id: null,
      direction: "inbound",
      type,
      content,
      status: "received",
      wa_message_id: null,
      error_code: null,
      error_message: null,
      origin: "inbound",
      sent_by_ai: 0,
      agent_id: null,
      campaign_id: null,
      client_ref: null,
      media_id: null,
      media_key: null,
      lane: "live",
      // Every detail filled, so the schema sees their shapes too.
      context_wa_message_id: "wamid.quoted",
      upstream_timestamp: null,
      details: JSON.stringify({
        contextMessageId: crypto.randomUUID(),
        forwarded: true,
        frequentlyForwarded: true,
        referral: {
          sourceUrl: "https://fb.me/x",
          sourceId: "1",
          sourceType: "ad",
          headline: null,
          body: null,
          mediaType: "image",
          ctwaClid: "c",
        },
        edits: [{
          previous: JSON.parse(content),
          editWaMessageId: "wamid.e",
          editedAt: "2026-11-20T12:01:00.000Z",
        }],
        deletedAt: "2026-11-20T12:02:00.000Z",
      }),
      created_at: "2026-11-20T12:00:00.000Z",
      updated_at: "2026-11-20T12:00:00.000Z",
    }));
    const parsed = MessageSchema.safeParse(view);
    assert.ok(parsed.success, `${type}: ${parsed.error?.message}`);
  }
  const wrong = MessageSchema.safeParse({
    ...toMessageView(toMessage({
      id: crypto.randomUUID(),
      account_id: crypto.randomUUID(),
      conversation_id: crypto.randomUUID(),
      contact_id: crypto.randomUUID(),
      channel_id: null,
      direction: "outbound",
      type: "text",
      content: "{}",
      status: "queued",
      wa_message_id: null,
      error_code: null,
      error_message: null,
      origin: "external_api",
      sent_by_ai: 0,
      agent_id: null,
      campaign_id: null,
      client_ref: null,
      media_id: null,
      media_key: null,
      lane: "live",
      context_wa_message_id: null,
      upstream_timestamp: null,
      details: null,
      created_at: "2026-11-20T12:00:00.000Z",
      updated_at: "2026-11-20T12:00:00.000Z",
    })),
    content: { body: "stored shape is not the GET shape" },
  });
  assert.equal(wrong.success, false);
});

engineTest(
  "GET /conversations/:id/messages is empty for a new conversation",
  async (h) => {
    const thread = await insertThread(h, { phoneNumber: "+5491122334455" });
    const res = await h.request(
      "GET",
      `${API}/conversations/${thread.conversationId}/messages?limit=1`,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, []);
    assert.equal(res.body.meta.hasMore, false);
    assert.equal(res.body.meta.cursor, null);
  },
);

engineTest(
  "the OpenAPI document lists the conversation routes with their scopes",
  async (h) => {
    const res = await h.request("GET", `${API}/openapi.json`);
    assert.equal(res.status, 200);
    const paths = res.body.paths;
    const scopeOf = (path: string, method: string) =>
      paths[path]?.[method]?.security?.[0]?.bearerAuth?.[0];
    assert.equal(scopeOf("/conversations", "get"), "conversations:read");
    assert.equal(
      scopeOf("/conversations/{id}", "patch"),
      "conversations:write",
    );
    assert.equal(
      scopeOf("/conversations/by-phone/{phone}", "get"),
      "conversations:read",
    );
    assert.equal(
      scopeOf("/conversations/resolve", "get"),
      "conversations:read",
    );
    assert.equal(
      scopeOf("/conversations/{id}/messages", "get"),
      "conversations:read",
    );
    assert.equal(
      scopeOf("/contacts/{id}/conversations", "get"),
      "contacts:read",
    );
    const message = res.body.components.schemas.Message;
    assert.equal(message.oneOf.length, 9);
    assert.ok(res.body.components.schemas.TextContent);
    assert.ok(res.body.components.schemas.Conversation);
  },
);

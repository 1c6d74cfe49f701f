import assert from "node:assert/strict";
import {
  countRows,
  customerWrites,
  getConversation,
  inboundEnvelope,
  messagingTest,
  newPhone,
  postWebhook,
  signedBody,
  waitInbound,
  waitPayloadsProcessed,
} from "./_helpers.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

messagingTest(
  "the same inbound delivered twice by the simulator is stored once",
  async (h) => {
    const phone = newPhone();
    const { wamid, message } = await customerWrites(h, phone);
    const again = await h.inbound({
      from: phone,
      type: "text",
      text: { body: "Hola" },
      id: wamid,
    });
    assert.equal(again.wamid, wamid);
    await waitPayloadsProcessed(h);
    assert.equal(await countRows(h, "inbound_payloads"), 2);
    assert.equal(await countRows(h, "messages"), 1);
    const conversation = await getConversation(h, message.conversationId);
    assert.equal(conversation.unreadCount, 1);
  },
);

messagingTest(
  "the same signed webhook body posted twice stores one message",
  async (h) => {
    const phone = newPhone();
    const wamid = `wamid.dup-${crypto.randomUUID()}`;
    const { raw, signature } = await signedBody(
      inboundEnvelope(h, {
        id: wamid,
        type: "text",
        text: { body: "Hola" },
      }, phone),
    );
    for (let i = 0; i < 2; i++) {
      const res = await postWebhook(h, raw, signature);
      assert.equal(res.status, 200);
    }
    await waitInbound(h, wamid);
    await waitPayloadsProcessed(h);
    assert.equal(await countRows(h, "messages"), 1);
    assert.equal(
      await countRows(h, "events", {
        column: "type",
        value: "message.received",
      }),
      1,
    );
  },
);

messagingTest(
  "an inbound updates the conversation's unread count, last message and window",
  async (h) => {
    const phone = newPhone();
    const firstAt = Math.floor(Date.now() / 1000) - 120;
    const { message: first } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "Primero" },
      timestamp: firstAt,
    });
    let conversation = await getConversation(h, first.conversationId);
    assert.equal(conversation.unreadCount, 1);
    assert.equal(conversation.status, "open");
    assert.equal(conversation.lastMessagePreview, "Primero");
    assert.equal(conversation.lastMessageDirection, "inbound");
    assert.equal(
      conversation.lastMessageAt,
      new Date(firstAt * 1000).toISOString(),
    );
    assert.equal(
      conversation.serviceWindowExpiresAt,
      new Date(firstAt * 1000 + DAY_MS).toISOString(),
    );
    const secondAt = firstAt + 60;
    await customerWrites(h, phone, {
      type: "text",
      text: { body: "Segundo" },
      timestamp: secondAt,
    });
    conversation = await getConversation(h, first.conversationId);
    assert.equal(conversation.unreadCount, 2);
    assert.equal(conversation.lastMessagePreview, "Segundo");
    assert.equal(
      conversation.lastMessageAt,
      new Date(secondAt * 1000).toISOString(),
    );
    assert.equal(
      conversation.serviceWindowExpiresAt,
      new Date(secondAt * 1000 + DAY_MS).toISOString(),
    );
    assert.equal(await countRows(h, "conversations"), 1);
  },
);

messagingTest("an inbound reopens a resolved conversation", async (h) => {
  const phone = newPhone();
  const { message } = await customerWrites(h, phone);
  const patch = await h.request(
    "PATCH",
    `/api/v2/conversations/${message.conversationId}`,
    { body: { status: "resolved" } },
  );
  assert.equal(patch.status, 200);
  assert.equal(patch.body.data.status, "resolved");
  const { message: next } = await customerWrites(h, phone, {
    type: "text",
    text: { body: "Una pregunta más" },
  });
  assert.equal(next.conversationId, message.conversationId);
  const conversation = await getConversation(h, message.conversationId);
  assert.equal(conversation.status, "open");
  assert.equal(conversation.lastMessagePreview, "Una pregunta más");
});

import assert from "node:assert/strict";
import {
  customerWrites,
  getConversation,
  type Json,
  messagingTest,
  type Mh,
  newPhone,
  seedTemplate,
  sendOk,
  simReads,
  templateTo,
  textTo,
} from "./_helpers.ts";

async function readConversation(h: Mh, id: string) {
  return await h.request("POST", `/api/v2/conversations/${id}/read`);
}

messagingTest(
  "POST /conversations/:id/read resets unread and marks the latest inbound read upstream",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone, { type: "text", text: { body: "uno" } });
    const { wamid, message } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "dos" },
    });
    // An outbound after them must not be the one marked.
    const out = await sendOk(h, textTo(phone));
    await h.waitForStatus(out, ["sent", "delivered", "read"]);
    assert.equal(
      (await getConversation(h, message.conversationId)).unreadCount,
      2,
    );
    const res = await readConversation(h, message.conversationId);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      conversationId: message.conversationId,
      markedMessageId: message.id,
      deliveredToMeta: true,
    });
    assert.equal(
      (await getConversation(h, message.conversationId)).unreadCount,
      0,
    );
    const reads = await simReads(h);
    assert.deepEqual(
      reads.map((r: Json) => [r.messageId, r.typing, r.phoneNumberId]),
      [[wamid, false, h.tenant.channel.upstreamPhoneNumberId]],
    );
  },
);

messagingTest(
  "POST /conversations/:id/read without an inbound message is not delivered upstream",
  async (h) => {
    await seedTemplate(h);
    const id = await sendOk(h, templateTo(newPhone()));
    const { conversationId } = await h.waitForStatus(id, ["read"]);
    const res = await readConversation(h, String(conversationId));
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      conversationId,
      markedMessageId: null,
      deliveredToMeta: false,
    });
    assert.deepEqual(await simReads(h), []);
    const unknown = await readConversation(h, crypto.randomUUID());
    assert.equal(unknown.status, 404);
  },
);

messagingTest(
  "POST /messages/:waMessageId/read marks an inbound message; outbound or unknown ids are 404",
  async (h) => {
    const phone = newPhone();
    const { wamid, message } = await customerWrites(h, phone);
    const res = await h.request("POST", `/api/v2/messages/${wamid}/read`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      conversationId: message.conversationId,
      markedMessageId: message.id,
      deliveredToMeta: true,
    });
    assert.equal(
      (await getConversation(h, message.conversationId)).unreadCount,
      0,
    );
    assert.deepEqual((await simReads(h)).map((r: Json) => r.messageId), [
      wamid,
    ]);
    const out = await sendOk(h, textTo(phone));
    const sent: Json = await h.waitForStatus(out, [
      "sent",
      "delivered",
      "read",
    ]);
    for (const id of [sent.waMessageId, "wamid.unknown"]) {
      const miss = await h.request("POST", `/api/v2/messages/${id}/read`);
      assert.equal(miss.status, 404, id);
      assert.equal(miss.body.error.code, "MESSAGE_NOT_FOUND");
    }
    assert.equal((await simReads(h)).length, 1);
  },
);

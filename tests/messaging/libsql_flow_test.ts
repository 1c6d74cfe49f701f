import assert from "node:assert/strict";
import {
  assertForwardChain,
  customerWrites,
  events,
  getConversation,
  messagingTest,
  newPhone,
  sendOk,
  simReads,
  simSendsOf,
  statusEvents,
  textTo,
} from "./_helpers.ts";

messagingTest(
  "[libsql] an inbound, a reply that reaches read, and a read receipt",
  async (h) => {
    assert.equal(h.engine, "libsql");
    const phone = newPhone();
    const { wamid, message: inbound } = await customerWrites(h, phone);
    assert.deepEqual(inbound.content, { text: "Hola" });
    assert.deepEqual((await events(h)).map((e) => e.type), [
      "contact.created",
      "conversation.created",
      "message.received",
    ]);
    const id = await sendOk(h, {
      ...textTo(phone, "¡Hola!"),
      clientRef: "ls-1",
    });
    const message = await h.waitForStatus(id, ["read", "failed"]);
    assert.equal(message.status, "read");
    assert.equal(message.conversationId, inbound.conversationId);
    assert.equal((await simSendsOf(h, id)).length, 1);
    const changes = await statusEvents(h, id);
    assertForwardChain(changes, "read");
    assert.equal(changes[0]!.data.clientRef, "ls-1");
    const read = await h.request(
      "POST",
      `/api/v2/conversations/${inbound.conversationId}/read`,
    );
    assert.equal(read.body.data.deliveredToMeta, true);
    assert.equal((await simReads(h))[0].messageId, wamid);
    const conversation = await getConversation(h, inbound.conversationId);
    assert.equal(conversation.unreadCount, 0);
    assert.equal(conversation.lastMessageDirection, "outbound");
    assert.equal(conversation.lastMessageStatus, "read");
  },
  { engine: "libsql", realTime: true },
);

import assert from "node:assert/strict";
import {
  assertForwardChain,
  customerWrites,
  events,
  messagingTest,
  newPhone,
  sendOk,
  statusEvents,
  textTo,
} from "./_helpers.ts";

messagingTest(
  "a first inbound records contact.created, conversation.created, message.received in order",
  async (h) => {
    const phone = newPhone();
    const { wamid, message } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "Hola" },
    });
    const rows = await events(h);
    assert.deepEqual(rows.map((e) => e.type), [
      "contact.created",
      "conversation.created",
      "message.received",
    ]);
    assert.ok(rows[0]!.seq < rows[1]!.seq && rows[1]!.seq < rows[2]!.seq);
    const [contact, conversation, received] = rows.map((e) => e.data);
    assert.equal(contact.id, message.contactId);
    assert.equal(contact.phoneNumber, phone);
    assert.equal(contact.name, "Ana");
    assert.equal(conversation.id, message.conversationId);
    assert.equal(conversation.contact.id, message.contactId);
    assert.equal(received.id, message.id);
    assert.equal(received.direction, "inbound");
    assert.equal(received.waMessageId, wamid);
    assert.deepEqual(received.content, { body: "Hola" });
    assert.deepEqual(received.contact, {
      id: message.contactId,
      name: "Ana",
      phoneNumber: phone,
      userId: null,
      username: null,
    });
    // The same customer again: one message.received, nothing created.
    await customerWrites(h, phone, {
      type: "text",
      text: { body: "¿Hay alguien?" },
    });
    assert.deepEqual((await events(h)).slice(3).map((e) => e.type), [
      "message.received",
    ]);
  },
);

messagingTest(
  "message.status_changed carries clientRef, previousStatus and newStatus",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    const id = await sendOk(h, { ...textTo(phone), clientRef: "crm-42" });
    await h.waitForStatus(id, ["read"]);
    const changes = await statusEvents(h, id);
    assertForwardChain(changes, "read");
    assert.equal(changes[0]!.data.previousStatus, "queued");
    for (const { data } of changes) {
      assert.equal(data.clientRef, "crm-42");
      assert.equal(data.direction, "outbound");
      assert.equal(data.status, data.newStatus);
      assert.deepEqual(data.content, { body: "Hi" });
      assert.match(String(data.waMessageId), /^wamid\./);
    }
    const noRef = await sendOk(h, textTo(phone, "sin ref"));
    await h.waitForStatus(noRef, ["read"]);
    for (const { data } of await statusEvents(h, noRef)) {
      assert.equal(data.clientRef, null);
    }
  },
);

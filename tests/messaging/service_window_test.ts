import assert from "node:assert/strict";
import {
  countRows,
  customerWrites,
  getConversation,
  type Json,
  messagingTest,
  newPhone,
  seedTemplate,
  send,
  sendOk,
  templateTo,
  textTo,
} from "./_helpers.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

messagingTest(
  "free text to a number that never wrote is SERVICE_WINDOW_EXPIRED and creates nothing",
  async (h) => {
    const res = await send(h, textTo(newPhone()));
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, "SERVICE_WINDOW_EXPIRED");
    assert.match(res.body.error.message, /template/);
    for (
      const table of [
        "contacts",
        "conversations",
        "messages",
        "events",
      ] as const
    ) {
      assert.equal(await countRows(h, table), 0, table);
    }
    assert.equal(
      await countRows(h, "jobs", { column: "kind", value: "message.send" }),
      0,
    );
  },
);

messagingTest(
  "an inbound older than 24 h leaves the window closed",
  async (h) => {
    const phone = newPhone();
    const sentAt = Math.floor((Date.now() - 25 * 60 * 60 * 1000) / 1000);
    const { message } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "Hola de ayer" },
      timestamp: sentAt,
    });
    const conversation = await getConversation(h, message.conversationId);
    assert.equal(
      conversation.serviceWindowExpiresAt,
      new Date(sentAt * 1000 + DAY_MS).toISOString(),
    );
    const res = await send(h, textTo(phone));
    assert.equal(res.status, 422);
    assert.equal(res.body.error.code, "SERVICE_WINDOW_EXPIRED");
    assert.equal(
      await countRows(h, "messages", {
        column: "direction",
        value: "outbound",
      }),
      0,
    );
    assert.equal(
      await countRows(h, "jobs", { column: "kind", value: "message.send" }),
      0,
    );
  },
);

messagingTest(
  "a recent inbound opens the window for free text",
  async (h) => {
    const phone = newPhone();
    const { message } = await customerWrites(h, phone);
    const conversation = await getConversation(h, message.conversationId);
    assert.ok(
      Date.parse(conversation.serviceWindowExpiresAt) >
        h.clock.now().getTime() + DAY_MS - 60_000,
    );
    const id = await sendOk(h, textTo(phone));
    assert.equal((await h.waitForStatus(id, ["read"])).status, "read");
  },
);

messagingTest(
  "a template needs no window and creates the contact and conversation",
  async (h) => {
    await seedTemplate(h);
    const phone = newPhone();
    const res = await send(h, templateTo(phone));
    assert.equal(res.status, 201);
    const message: Json = await h.waitForStatus(res.body.data.id, ["read"]);
    assert.equal(message.type, "template");
    const contact = await h.request(
      "GET",
      `/api/v2/contacts/${message.contactId}`,
    );
    assert.equal(contact.body.data.phoneNumber, phone);
    const conversation = await getConversation(h, message.conversationId);
    assert.equal(conversation.serviceWindowExpiresAt, null);
    // Still no window for free text after the template.
    const text = await send(h, textTo(phone));
    assert.equal(text.body.error.code, "SERVICE_WINDOW_EXPIRED");
  },
);

import assert from "node:assert/strict";
import {
  customerWrites,
  nextPhone,
  webhookTest,
} from "../_support/webhooks.ts";
import { recordEvent } from "../../src/domain/events/event_service.ts";

const ALL = [
  "contact.created",
  "conversation.created",
  "message.received",
];

webhookTest(
  "a new customer's contact.created reaches each subscription before its conversation and message",
  async (h, receiver) => {
    let contactFails = 1;
    receiver.answer((r) => {
      if (r.json.event === "contact.created" && contactFails-- > 0) {
        return new Response("not yet", { status: 503 });
      }
      return new Response("ok");
    });
    const hook = await h.subscribe({ url: receiver.url, events: ALL });
    const other = await h.subscribe({
      url: `${receiver.url}?other`,
      events: ["message.received"],
    });
    await customerWrites(h, nextPhone(), "Hola");
    await h.deliver();
    // contact.created failed: the conversation and message wait for it...
    const first = receiver.received.filter((r) => r.json.webhookId === hook.id);
    assert.deepEqual(first.map((r) => r.json.event), ["contact.created"]);
    // ...but a subscription without contact.created does not wait for anything.
    assert.deepEqual(
      receiver.received.filter((r) => r.json.webhookId === other.id).map((r) =>
        r.json.event
      ),
      ["message.received"],
    );
    // The retry succeeds and the waiting deliveries follow, in order.
    h.clock.advance(7_000);
    await h.deliver();
    h.clock.advance(1_000);
    await h.deliver();
    const events = receiver.received.filter((r) => r.json.webhookId === hook.id)
      .map((r) => r.json.event);
    assert.deepEqual(events.slice(0, 2), [
      "contact.created",
      "contact.created",
    ]);
    assert.deepEqual(events.slice(2).sort(), [
      "conversation.created",
      "message.received",
    ]);
    const received =
      receiver.received.find((r) =>
        r.json.webhookId === hook.id && r.json.event === "message.received"
      )!.json.data;
    assert.deepEqual(received.content, { body: "Hola" });
    assert.equal(received.direction, "inbound");
    assert.equal(typeof received.contact.id, "string");
    assert.equal(received.contact.name, "Ana");
    // A later message of the same contact waits for nothing.
    receiver.received.length = 0;
    await customerWrites(h, received.contact.phoneNumber, "¿Sigue ahí?");
    await h.deliver();
    assert.deepEqual(
      receiver.received.filter((r) => r.json.webhookId === hook.id).map((r) =>
        r.json.event
      ),
      ["message.received"],
    );
  },
);

webhookTest(
  "deliveries that wait for contact.created are not run before it ends, then at once",
  async (h, receiver) => {
    const hook = await h.subscribe({ url: receiver.url, events: ALL });
    await customerWrites(h, nextPhone(), "Hola");
    // Only contact.created is due; its success wakes the two waiting
    // deliveries in the same run, so each job runs once and none is put back.
    assert.equal(await h.deliver(), 3);
    const events = receiver.received.filter((r) => r.json.webhookId === hook.id)
      .map((r) => r.json.event);
    assert.equal(events[0], "contact.created");
    assert.deepEqual(events.slice(1).sort(), [
      "conversation.created",
      "message.received",
    ]);
    assert.equal(await h.deliver(), 0);
  },
);

webhookTest(
  "a status change does not wait for its contact's contact.created (only conversation.created and message.received do)",
  async (h, receiver) => {
    await h.subscribe({
      url: receiver.url,
      events: [...ALL, "message.status_changed"],
    });
    const accountId = h.tenant.account.id;
    const createdAt = h.clock.now();
    await h.container.db.transaction().execute(async (trx) => {
      await recordEvent(trx, {
        accountId,
        type: "contact.created",
        data: { id: "contact-w1" },
        createdAt,
      });
      await recordEvent(trx, {
        accountId,
        type: "conversation.created",
        data: { id: "conversation-w1", contactId: "contact-w1" },
        createdAt,
      });
      await recordEvent(trx, {
        accountId,
        type: "message.status_changed",
        data: { id: "message-w1", contactId: "contact-w1", newStatus: "sent" },
        createdAt,
      });
    });
    const rows = await h.container.db.selectFrom("webhook_deliveries")
      .select(["event", "after_root_id"]).execute();
    const waiting = Object.fromEntries(
      rows.map((r) => [r.event, r.after_root_id !== null]),
    );
    assert.deepEqual(waiting, {
      "contact.created": false,
      "conversation.created": true,
      "message.status_changed": false,
    });
  },
);

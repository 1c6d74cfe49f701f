import assert from "node:assert/strict";
import {
  countRows,
  customerWrites,
  messagingTest,
  type Mh,
  newPhone,
  seedTemplate,
  simSendsOf,
  templateTo,
  textTo,
} from "./_helpers.ts";

async function batch(h: Mh, body: Record<string, unknown>) {
  return await h.request("POST", "/api/v2/messages/batch", { body });
}

async function optOut(h: Mh, contactId: string) {
  const res = await h.request("PATCH", `/api/v2/contacts/${contactId}`, {
    body: { optedIn: false },
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.data.optedIn, false);
}

messagingTest("POST /messages/batch takes 1 to 100 messages", async (h) => {
  const phone = newPhone();
  for (const size of [0, 101]) {
    const res = await batch(h, {
      defaultPhoneNumberId: h.tenant.channel.id,
      messages: Array.from({ length: size }, () => textTo(phone)),
    });
    assert.equal(res.status, 400, `size ${size}`);
    assert.equal(res.body.error.code, "VALIDATION_ERROR");
  }
  const missing = await batch(h, { defaultPhoneNumberId: h.tenant.channel.id });
  assert.equal(missing.status, 400);
  assert.equal(await countRows(h, "messages"), 0);
});

messagingTest(
  "a batch reports each item queued, skipped or failed in request order",
  async (h) => {
    const open = newPhone();
    const optedOut = newPhone();
    const fresh = newPhone();
    await customerWrites(h, open);
    const { message } = await customerWrites(h, optedOut);
    await optOut(h, message.contactId);
    await seedTemplate(h);
    const res = await batch(h, {
      defaultPhoneNumberId: h.tenant.channel.id,
      messages: [
        { ...textTo(open, "Hola"), clientRef: "c-0" },
        { ...textTo("not-a-phone"), clientRef: "c-1" },
        {
          ...textTo(open),
          phoneNumberId: crypto.randomUUID(),
          clientRef: "c-2",
        },
        { type: "text", text: { body: "Hi" }, clientRef: "c-3" },
        { ...textTo(optedOut), clientRef: "c-4" },
        { ...templateTo(fresh), clientRef: "c-5" },
        { ...textTo(newPhone()), clientRef: "c-6" },
        { to: open, type: "sticker", sticker: { id: "1" } },
      ],
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const data = res.body.data;
    assert.deepEqual(
      { accepted: data.accepted, skipped: data.skipped, failed: data.failed },
      { accepted: 2, skipped: 1, failed: 5 },
    );
    assert.deepEqual(
      data.items.map((i: { index: number }) => i.index),
      [0, 1, 2, 3, 4, 5, 6, 7],
    );
    const [q0, f1, f2, f3, s4, q5, f6, f7] = data.items;
    for (const [item, ref] of [[q0, "c-0"], [q5, "c-5"]]) {
      assert.equal(item.result, "queued");
      assert.equal(item.clientRef, ref);
      assert.deepEqual(Object.keys(item.message).sort(), [
        "clientRef",
        "createdAt",
        "id",
        "status",
        "type",
        "waMessageId",
      ]);
      assert.equal(item.message.status, "queued");
      assert.equal(item.message.waMessageId, null);
      assert.equal(item.message.clientRef, ref);
    }
    assert.equal(q0.message.type, "text");
    assert.equal(q5.message.type, "template");
    assert.deepEqual(
      [f1, f2, f3, f6, f7].map((i) => [i.result, i.error.code]),
      [
        ["failed", "INVALID_PHONE"],
        ["failed", "INVALID_CHANNEL"],
        ["failed", "MISSING_REQUIRED_FIELD"],
        ["failed", "SERVICE_WINDOW_EXPIRED"],
        ["failed", "INVALID_MESSAGE_TYPE"],
      ],
    );
    for (const item of [f1, f2, f3, f6, f7]) {
      assert.equal(typeof item.error.message, "string");
      assert.ok(item.error.message.length > 0);
    }
    assert.equal(f1.clientRef, "c-1");
    assert.equal(f7.clientRef, null);
    assert.deepEqual(s4, {
      index: 4,
      clientRef: "c-4",
      result: "skipped",
      reason: "opted_out",
    });
    for (const item of [q0, q5]) {
      const sent = await h.waitForStatus(item.message.id, ["read", "failed"]);
      assert.equal(sent.status, "read");
      assert.equal(sent.phoneNumberId, h.tenant.channel.id);
      assert.equal((await simSendsOf(h, item.message.id)).length, 1);
    }
    assert.equal(
      await countRows(h, "messages", {
        column: "direction",
        value: "outbound",
      }),
      2,
    );
  },
);

messagingTest(
  "respectOptOut false sends to an opted-out contact",
  async (h) => {
    const phone = newPhone();
    const { message } = await customerWrites(h, phone);
    await optOut(h, message.contactId);
    const res = await batch(h, {
      defaultPhoneNumberId: h.tenant.channel.id,
      respectOptOut: false,
      messages: [textTo(phone, "Aviso importante")],
    });
    assert.equal(res.status, 202);
    assert.equal(res.body.data.accepted, 1);
    assert.equal(res.body.data.skipped, 0);
    const [item] = res.body.data.items;
    assert.equal(item.result, "queued");
    assert.equal(
      (await h.waitForStatus(item.message.id, ["read", "failed"])).status,
      "read",
    );
  },
);

messagingTest(
  "a batch item without phoneNumberId and no defaultPhoneNumberId fails alone",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    const res = await batch(h, {
      messages: [
        { ...textTo(phone), phoneNumberId: h.tenant.channel.id },
        textTo(phone),
      ],
    });
    assert.equal(res.status, 202);
    const [own, none] = res.body.data.items;
    assert.equal(own.result, "queued");
    assert.equal(none.result, "failed");
    assert.equal(none.error.code, "MISSING_REQUIRED_FIELD");
    assert.match(none.error.message, /phoneNumberId/);
  },
);

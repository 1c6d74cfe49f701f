import assert from "node:assert/strict";
import { freePort } from "../_support/wait.ts";
import { createMessagingHarness } from "../_support/messaging.ts";
import {
  behave,
  customerWrites,
  type Json,
  messagingTest,
  type Mh,
  newPhone,
  seedTemplate,
  sendOk,
  simReads,
  templateTo,
} from "./_helpers.ts";

async function typing(h: Mh, conversationId: string, status: "on" | "off") {
  return await h.request(
    "POST",
    `/api/v2/conversations/${conversationId}/typing`,
    { body: { status } },
  );
}

messagingTest(
  "typing on shows the indicator anchored on the latest inbound",
  async (h) => {
    const phone = newPhone();
    await customerWrites(h, phone);
    const { wamid, message } = await customerWrites(h, phone, {
      type: "text",
      text: { body: "¿Siguen ahí?" },
    });
    const res = await typing(h, message.conversationId, "on");
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      conversationId: message.conversationId,
      status: "on",
      deliveredToMeta: true,
    });
    assert.deepEqual(
      (await simReads(h)).map((r: Json) => [r.messageId, r.typing]),
      [[wamid, true]],
    );
  },
);

messagingTest("typing off is accepted and sends nothing", async (h) => {
  const { message } = await customerWrites(h, newPhone());
  const res = await typing(h, message.conversationId, "off");
  assert.equal(res.status, 200);
  assert.deepEqual(res.body.data, {
    conversationId: message.conversationId,
    status: "off",
    deliveredToMeta: false,
    reason: "typing_off_noop",
  });
  assert.deepEqual(await simReads(h), []);
});

messagingTest(
  "typing without an inbound message has nothing to anchor on",
  async (h) => {
    await seedTemplate(h);
    const id = await sendOk(h, templateTo(newPhone()));
    const { conversationId } = await h.waitForStatus(id, ["read"]);
    const res = await typing(h, String(conversationId), "on");
    assert.equal(res.status, 200);
    assert.equal(res.body.data.deliveredToMeta, false);
    assert.equal(res.body.data.reason, "no_inbound_to_anchor");
    assert.deepEqual(await simReads(h), []);
  },
);

messagingTest("typing the upstream rejects is meta_rejected", async (h) => {
  const { message } = await customerWrites(h, newPhone());
  await behave(h, { failNext: [{ code: 131026, mode: "sync" }] });
  const res = await typing(h, message.conversationId, "on");
  assert.equal(res.status, 200);
  assert.equal(res.body.data.deliveredToMeta, false);
  assert.equal(res.body.data.reason, "meta_rejected");
  assert.deepEqual(await simReads(h), []);
  // The rule was used up: the next call goes through.
  const again = await typing(h, message.conversationId, "on");
  assert.equal(again.body.data.deliveredToMeta, true);
});

Deno.test({
  name: "typing with the upstream unreachable is meta_unreachable",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    // The simulator still delivers inbound; the app's Graph calls go to a closed port.
    await using h = await createMessagingHarness({
      env: { META_GRAPH_URL: `http://127.0.0.1:${freePort()}/v22.0` },
    });
    const { message } = await customerWrites(h, newPhone());
    const res = await typing(h, message.conversationId, "on");
    assert.equal(res.status, 200);
    assert.equal(res.body.data.deliveredToMeta, false);
    assert.equal(res.body.data.reason, "meta_unreachable");
    const read = await h.request(
      "POST",
      `/api/v2/conversations/${message.conversationId}/read`,
    );
    assert.equal(read.status, 200);
    assert.equal(read.body.data.deliveredToMeta, false);
    assert.equal(read.body.data.markedMessageId, message.id);
    assert.deepEqual(await simReads(h), []);
  },
});

messagingTest("typing on an unknown conversation is 404", async (h) => {
  const res = await typing(h, crypto.randomUUID(), "on");
  assert.equal(res.status, 404);
  assert.equal(res.body.error.code, "CONVERSATION_NOT_FOUND");
});

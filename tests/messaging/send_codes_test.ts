// Exact codes on the send paths: a channel id that is not a UUID, a bad
// batch default, template component case, and the reaction emoji.
import assert from "node:assert/strict";
import {
  countRows,
  customerWrites,
  getMessage,
  messagingTest,
  newPhone,
  seedTemplate,
  send,
  sendOk,
  templateTo,
} from "./_helpers.ts";

messagingTest(
  "POST /messages answers 422 INVALID_CHANNEL naming phoneNumberId when it is not a UUID",
  async (h) => {
    const upstreamId = h.tenant.channel.upstreamPhoneNumberId;
    for (const bad of [upstreamId, Number(upstreamId), ""]) {
      const res = await send(h, {
        ...templateTo(newPhone()),
        phoneNumberId: bad,
      });
      assert.equal(res.status, 422, JSON.stringify(res.body));
      assert.equal(res.body.error.code, "INVALID_CHANNEL");
      assert.match(res.body.error.message, /^Invalid field "phoneNumberId": /);
      assert.match(res.body.error.message, /GET \/channels/);
    }
    assert.equal(await countRows(h, "messages"), 0);
    assert.equal(await countRows(h, "contacts"), 0);
  },
);

messagingTest(
  "a batch with a bad defaultPhoneNumberId fails only the items that use it",
  async (h) => {
    await seedTemplate(h);
    const res = await h.request("POST", "/api/v2/messages/batch", {
      body: {
        defaultPhoneNumberId: h.tenant.channel.upstreamPhoneNumberId,
        messages: [
          { ...templateTo(newPhone()), phoneNumberId: h.tenant.channel.id },
          { ...templateTo(newPhone()), clientRef: "uses-default" },
          { ...templateTo(newPhone()), phoneNumberId: "123" },
        ],
      },
    });
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const { accepted, failed, items } = res.body.data;
    assert.equal(accepted, 1);
    assert.equal(failed, 2);
    assert.equal(items[0].result, "queued");
    assert.equal(items[1].result, "failed");
    assert.equal(items[1].clientRef, "uses-default");
    assert.equal(items[1].error.code, "INVALID_CHANNEL");
    assert.match(
      items[1].error.message,
      /^Invalid field "defaultPhoneNumberId": /,
    );
    assert.equal(items[2].result, "failed");
    assert.equal(items[2].error.code, "INVALID_CHANNEL");
    assert.match(items[2].error.message, /^Invalid field "phoneNumberId": /);
    assert.equal(await countRows(h, "messages"), 1);
  },
);

messagingTest(
  "POST /messages takes template components as GET /templates shows them",
  async (h) => {
    await seedTemplate(h);
    const body = templateTo(newPhone());
    const template = body.template as { components: { type: string }[] };
    template.components[0]!.type = "BODY";
    const id = await sendOk(h, body);
    const message = await getMessage(h, id);
    assert.equal(message.content.components[0].type, "body");
  },
);

messagingTest(
  "a reaction's emoji must be one emoji or empty",
  async (h) => {
    const phone = newPhone();
    const { wamid } = await customerWrites(h, phone);
    const react = (emoji: string) =>
      send(h, {
        to: phone,
        type: "reaction",
        reaction: { message_id: wamid, emoji },
      });
    for (const emoji of ["ab", "👍👍", ":)"]) {
      const res = await react(emoji);
      assert.equal(res.status, 400, emoji);
      assert.equal(res.body.error.code, "VALIDATION_ERROR");
      assert.match(res.body.error.message, /"reaction\.emoji"/);
    }
    // A ZWJ sequence with skin tones (15 UTF-16 units), a flag, and "" (removes).
    for (const emoji of ["🧑🏻‍❤️‍💋‍🧑🏼", "🇦🇷", ""]) {
      const res = await react(emoji);
      assert.equal(res.status, 201, `${emoji}: ${JSON.stringify(res.body)}`);
    }
  },
);

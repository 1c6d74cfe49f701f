import assert from "node:assert/strict";
import { createChannel } from "../../src/domain/channels/channel_service.ts";
import { registerNumber } from "../_support/messaging.ts";
import {
  countRows,
  messagingTest,
  type Mh,
  newPhone,
  seedTemplate,
  send,
  simSendsOf,
  templateTo,
} from "./_helpers.ts";

/** Everything a rejected send must leave untouched. */
async function snapshot(h: Mh) {
  return {
    contacts: await countRows(h, "contacts"),
    messages: await countRows(h, "messages"),
    sendJobs: await countRows(h, "jobs", {
      column: "kind",
      value: "message.send",
    }),
  };
}

async function expectRejected(
  h: Mh,
  body: Record<string, unknown>,
  expected: { status: number; code: string },
) {
  const before = await snapshot(h);
  const res = await send(h, body);
  assert.equal(res.status, expected.status, JSON.stringify(res.body));
  assert.equal(res.body.error.code, expected.code);
  assert.deepEqual(await snapshot(h), before, "nothing was queued");
  return res.body.error.message as string;
}

messagingTest(
  "a template that does not exist is TEMPLATE_NOT_FOUND",
  async (h) => {
    await seedTemplate(h, { name: "greeting" });
    const message = await expectRejected(h, templateTo(newPhone(), "missing"), {
      status: 422,
      code: "TEMPLATE_NOT_FOUND",
    });
    assert.match(message, /"missing"/);
    // Same name in another language is another template.
    await expectRejected(h, {
      ...templateTo(newPhone()),
      template: { name: "greeting", language: { code: "en" } },
    }, { status: 422, code: "TEMPLATE_NOT_FOUND" });
  },
);

messagingTest(
  "a pending or paused template is TEMPLATE_NOT_APPROVED",
  async (h) => {
    await seedTemplate(h, { name: "waiting", status: "pending" });
    await seedTemplate(h, { name: "on_hold", status: "paused" });
    for (const name of ["waiting", "on_hold"]) {
      const message = await expectRejected(h, templateTo(newPhone(), name), {
        status: 422,
        code: "TEMPLATE_NOT_APPROVED",
      });
      assert.match(message, /approved/);
    }
  },
);

messagingTest(
  "a body parameter count that does not match the template is 400",
  async (h) => {
    await seedTemplate(h, { body: "Hola {{1}}" });
    for (const params of [[], ["Ana", "extra"]]) {
      const message = await expectRejected(
        h,
        templateTo(newPhone(), "greeting", params),
        { status: 400, code: "VALIDATION_ERROR" },
      );
      assert.match(message, /expects 1 parameter/);
    }
    const none = { ...templateTo(newPhone()) };
    (none.template as Record<string, unknown>).components = undefined;
    await expectRejected(h, none, { status: 400, code: "VALIDATION_ERROR" });
  },
);

messagingTest("a global template is usable by every channel", async (h) => {
  await seedTemplate(h, { name: "global_hello", channelId: null });
  const second = await createChannel(h.container, {
    accountId: h.tenant.account.id,
    phoneNumber: "+15550177777",
    displayName: "second line",
    upstreamPhoneNumberId: `3${Date.now()}`,
    wabaId: "99",
    accessToken: "token-2",
  });
  await registerNumber(
    h.simulator.url,
    second.upstreamPhoneNumberId,
    second.phoneNumber,
  );
  for (const channel of [h.tenant.channel, second]) {
    const res = await send(h, {
      ...templateTo(newPhone(), "global_hello"),
      phoneNumberId: channel.id,
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const message = await h.waitForStatus(res.body.data.id, ["read", "failed"]);
    assert.equal(message.status, "read");
    assert.equal(message.phoneNumberId, channel.id);
    const upstream = await simSendsOf(h, res.body.data.id);
    assert.equal(upstream.length, 1);
    assert.equal(upstream[0].phoneNumberId, channel.upstreamPhoneNumberId);
  }
});

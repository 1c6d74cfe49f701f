// Sending to a customer who uses a WhatsApp username: the Graph request
// names the BSUID as `recipient` (reference/meta-graph-api.md §4.7).
import assert from "node:assert/strict";
import {
  behave,
  countRows,
  customerWrites,
  messagingTest,
  seedTemplate,
  send,
  sendOk,
  simSendsOf,
  statusEvents,
  templateTo,
  textTo,
} from "./_helpers.ts";

const USER_ID = "US.13491208655302741918";

messagingTest(
  "a reply to a username customer goes to their BSUID and its statuses (by recipient_user_id) reach read",
  async (h) => {
    const { message: inbound } = await customerWrites(h, USER_ID, {
      from: undefined,
      userId: USER_ID,
      username: "sofi.cafe",
      type: "text",
      text: { body: "Hola" },
    });
    const id = await sendOk(h, textTo(USER_ID, "¡Hola!"));
    const sent = await h.waitForStatus(id, ["read"]);
    assert.equal(sent.contactId, inbound.contactId);
    assert.equal(sent.conversationId, inbound.conversationId);
    const [request] = await simSendsOf(h, id);
    assert.equal(request.body.recipient, USER_ID);
    assert.equal(request.body.to, undefined, "no phone number is sent");
    // The simulator's status reports carry recipient_user_id and no recipient_id.
    const callbacks = (await h.container.db.selectFrom("inbound_payloads")
      .select("body").execute()).map((r) => r.body)
      .filter((b) => b.includes('"statuses"'));
    assert.ok(callbacks.length > 0);
    for (const body of callbacks) {
      assert.match(body, /"recipient_user_id":"US\.13491208655302741918"/);
      assert.doesNotMatch(body, /"recipient_id"/);
    }
    assert.deepEqual(
      (await statusEvents(h, id)).map((e) => e.data.newStatus).at(-1),
      "read",
    );
  },
);

messagingTest(
  "free text to a BSUID that never wrote is refused by the window rule; a template is sent",
  async (h) => {
    const stranger = "BR.77712086553027";
    const refused = await send(h, textTo(stranger));
    assert.equal(refused.status, 422);
    assert.equal(refused.body.error.code, "SERVICE_WINDOW_EXPIRED");
    assert.match(refused.body.error.message, /"BR\.77712086553027"/);
    assert.equal(await countRows(h, "contacts"), 0);

    await seedTemplate(h);
    const id = await sendOk(h, templateTo(stranger));
    await h.waitForStatus(id, ["sent", "delivered", "read"]);
    const [request] = await simSendsOf(h, id);
    assert.equal(request.body.recipient, stranger);
    assert.equal(request.body.type, "template");
    const contact = (await h.request("GET", "/api/v2/contacts")).body.data[0];
    assert.equal(contact.userId, stranger);
    assert.equal(contact.phoneNumber, null);

    // Batch items take a BSUID too, and land on the same contact.
    const batch = await h.request("POST", "/api/v2/messages/batch", {
      body: {
        defaultPhoneNumberId: h.tenant.channel.id,
        messages: [templateTo(stranger)],
      },
    });
    assert.equal(batch.status, 202, JSON.stringify(batch.body));
    assert.equal(batch.body.data.items[0].result, "queued");
    assert.equal(await countRows(h, "contacts"), 1);
  },
);

messagingTest(
  "131062 (BSUID recipient not supported for this template) fails the message for good with a clear error",
  async (h) => {
    await seedTemplate(h, { name: "otp" });
    await behave(h, { failNext: [{ code: 131062, mode: "sync" }] });
    const id = await sendOk(h, templateTo("US.55512086553027", "otp"));
    const failed = await h.waitForStatus(id, ["failed"]);
    assert.equal(failed.errorCode, "131062");
    assert.match(
      String(failed.errorMessage),
      /Business-scoped User ID recipients are not supported.*customer's phone number/,
    );
    assert.equal((await simSendsOf(h, id)).length, 0, "nothing was accepted");
    const job = await h.container.db.selectFrom("jobs").select([
      "state",
      "attempt",
    ])
      .where("kind", "=", "message.send").executeTakeFirstOrThrow();
    assert.equal(job.attempt, 1, "a permanent failure is not retried");
  },
);

messagingTest(
  "POST /messages refuses a `to` that is neither a phone number nor a BSUID",
  async (h) => {
    for (const to of ["US.", "us.123", "XX.12-34", "abc"]) {
      const res = await send(h, textTo(to));
      assert.equal(res.status, 400, to);
      assert.equal(res.body.error.code, "INVALID_PHONE", to);
    }
  },
);

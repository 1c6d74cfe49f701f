// Senders written the odd ways real payloads write them: the shapes come from
// public test suites of Cloud API clients (nyaruka/courier's
// handlers/meta/testdata/wac/hello_invalid_user_id.json and no_from.json) and
// from numbers WhatsApp spells differently in `from` and `contacts[].wa_id`.
import assert from "node:assert/strict";
import {
  countRows,
  type Json,
  messagingTest,
  metaChange,
  type Mh,
  postSigned,
  waitInbound,
  waitPayloadsProcessed,
} from "./_helpers.ts";

function text(body: string, sender: Record<string, unknown> = {}) {
  return {
    ...sender,
    id: `wamid.id-${crypto.randomUUID()}`,
    timestamp: String(Math.floor(Date.now() / 1000)),
    type: "text",
    text: { body },
  };
}

/** The stored message's contact as the API shows it. */
async function senderOf(h: Mh, wamid: string): Promise<Json> {
  const message = await waitInbound(h, wamid);
  const res = await h.request("GET", `/api/v2/contacts/${message.contactId}`);
  assert.equal(res.status, 200);
  return res.body.data;
}

/** What processing noted on the stored payload (skipped or ignored parts). */
async function payloadNote(h: Mh): Promise<string> {
  await waitPayloadsProcessed(h);
  const row = await h.container.db.selectFrom("inbound_payloads")
    .select("error").orderBy("received_at", "desc")
    .executeTakeFirstOrThrow();
  return row.error ?? "";
}

function identity(contact: Json) {
  const { phoneNumber, userId, username, name } = contact;
  return { phoneNumber, userId, username, name };
}

messagingTest(
  "a valid phone with a malformed from_user_id is stored by phone; the id is ignored and noted",
  async (h) => {
    // courier's hello_invalid_user_id.json, with a phone number that parses.
    const message = text("Hello World", {
      from: "250788123200",
      from_user_id: "foo_bar",
    });
    await postSigned(
      h,
      metaChange(h, {
        contacts: [{
          profile: { name: "Kerry Fisher", username: "@kfisher" },
          wa_id: "250788123200",
          user_id: "foo_bar",
        }],
        messages: [message],
      }),
    );
    assert.deepEqual(identity(await senderOf(h, message.id)), {
      phoneNumber: "+250788123200",
      userId: null,
      username: "@kfisher",
      name: "Kerry Fisher",
    });
    assert.match(
      await payloadNote(h),
      new RegExp(
        `ignored message "${message.id}": from_user_id "foo_bar" is not a business-scoped user id`,
      ),
    );
  },
);

messagingTest(
  "an empty or non-string from_user_id beside a valid phone does not lose the message",
  async (h) => {
    const empty = text("empty id", { from: "5491155550101", from_user_id: "" });
    const number = text("numeric id", {
      from: "5491155550102",
      from_user_id: 1410018717833190,
    });
    await postSigned(h, metaChange(h, { messages: [empty, number] }));
    assert.equal((await senderOf(h, empty.id)).phoneNumber, "+5491155550101");
    assert.equal((await senderOf(h, number.id)).phoneNumber, "+5491155550102");
    assert.equal(await countRows(h, "messages"), 2);
  },
);

messagingTest(
  "a malformed from_user_id with nothing else to go by is still skipped, naming it",
  async (h) => {
    const lost = text("no phone", { from_user_id: "foo_bar" });
    const kept = text("kept", { from: "5491155550103" });
    await postSigned(h, metaChange(h, { messages: [lost, kept] }));
    await waitInbound(h, kept.id);
    assert.match(
      await payloadNote(h),
      new RegExp(`message "${lost.id}": sender "foo_bar" is neither`),
    );
    assert.equal(await countRows(h, "messages"), 1);
  },
);

const LONE_CONTACT_CASES: Array<[string, Record<string, unknown>, Json]> = [
  ["its wa_id", { profile: { name: "Kerry Fisher" }, wa_id: "250788123201" }, {
    phoneNumber: "+250788123201",
    userId: null,
    username: null,
    name: "Kerry Fisher",
  }],
  ["its user_id", {
    profile: { name: "Sheena Nelson", username: "@realsheenanelson" },
    user_id: "US.13491208655302741918",
  }, {
    phoneNumber: null,
    userId: "US.13491208655302741918",
    username: "@realsheenanelson",
    name: "Sheena Nelson",
  }],
];

for (const [what, contact, expected] of LONE_CONTACT_CASES) {
  messagingTest(
    `a message with neither from nor from_user_id belongs to the change's one contact (${what})`,
    async (h) => {
      // courier's no_from.json, with an id on its one contact.
      const message = text("Hello World");
      await postSigned(
        h,
        metaChange(h, { contacts: [contact], messages: [message] }),
      );
      assert.deepEqual(identity(await senderOf(h, message.id)), expected);
    },
  );
}

messagingTest(
  "a malformed from_user_id and no from: the change's one contact names the sender",
  async (h) => {
    // courier's hello_invalid_user_id.json without its `from`.
    const message = text("Hello World", { from_user_id: "foo_bar" });
    await postSigned(
      h,
      metaChange(h, {
        contacts: [{
          profile: { name: "Kerry Fisher" },
          wa_id: "250788123202",
          user_id: "foo_bar",
        }],
        messages: [message],
      }),
    );
    assert.deepEqual(identity(await senderOf(h, message.id)), {
      phoneNumber: "+250788123202",
      userId: null,
      username: null,
      name: "Kerry Fisher",
    });
    assert.match(await payloadNote(h), /ignored message .*"foo_bar"/);
  },
);

messagingTest(
  "a message with neither from nor from_user_id is skipped when the change has two contacts",
  async (h) => {
    const orphan = text("whose?");
    const kept = text("mine", { from: "5491155550104" });
    await postSigned(
      h,
      metaChange(h, {
        contacts: [
          { profile: { name: "Ana" }, wa_id: "5491155550104" },
          { profile: { name: "Bo" }, wa_id: "5491155550105" },
        ],
        messages: [orphan, kept],
      }),
    );
    await waitInbound(h, kept.id);
    assert.match(
      await payloadNote(h),
      new RegExp(`message "${orphan.id}": it names no sender`),
    );
    assert.equal(await countRows(h, "contacts"), 1);
  },
);

/** `from` and the one contact's `wa_id` as WhatsApp writes them for one person. */
const SPELLINGS: Array<[string, string, string]> = [
  ["an Argentine mobile without its 9", "5491155550106", "541155550106"],
  [
    "an Argentine mobile with its 9 only in wa_id",
    "541155550107",
    "5491155550107",
  ],
  ["a leading + in wa_id", "5491155550108", "+5491155550108"],
  // WhatsApp's wa_id of an older Brazilian mobile lacks the 9 that `from` has.
  [
    "a Brazilian mobile without its ninth digit",
    "5561999998888",
    "556199998888",
  ],
];

for (const [what, from, waId] of SPELLINGS) {
  messagingTest(
    `the one contact's profile is the one sender's when wa_id is written otherwise (${what})`,
    async (h) => {
      const first = text("hola", { from });
      const second = text("¿están?", { from });
      await postSigned(
        h,
        metaChange(h, {
          contacts: [{ profile: { name: "Ana Gómez" }, wa_id: waId }],
          messages: [first, second],
        }),
      );
      const contact = await senderOf(h, first.id);
      assert.equal(contact.name, "Ana Gómez");
      assert.equal((await senderOf(h, second.id)).id, contact.id);
      assert.equal(await countRows(h, "contacts"), 1);
    },
  );
}

messagingTest(
  "with two senders, a contact whose wa_id matches neither names nobody",
  async (h) => {
    const one = text("uno", { from: "5491155550109" });
    const two = text("dos", { from: "5491155550110" });
    await postSigned(
      h,
      metaChange(h, {
        contacts: [{ profile: { name: "Somebody" }, wa_id: "14155550111" }],
        messages: [one, two],
      }),
    );
    assert.equal((await senderOf(h, one.id)).name, null);
    assert.equal((await senderOf(h, two.id)).name, null);
    assert.equal(await countRows(h, "contacts"), 2);
  },
);

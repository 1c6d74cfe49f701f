// Senders as Meta really sends them since 2026: a phone number, a
// business-scoped user id (BSUID), or both (reference/meta-graph-api.md §4.7).
import assert from "node:assert/strict";
import {
  countRows,
  customerWrites,
  events,
  getConversation,
  type Json,
  messagingTest,
  metaChange,
  type Mh,
  postSigned,
  sendOk,
  textTo,
  waitInbound,
  waitPayloadsProcessed,
} from "./_helpers.ts";

function unixNow(): string {
  return String(Math.floor(Date.now() / 1000));
}

function wamid(): string {
  return `wamid.id-${crypto.randomUUID()}`;
}

function text(body: string, sender: Record<string, string>) {
  return {
    ...sender,
    id: wamid(),
    timestamp: unixNow(),
    type: "text",
    text: { body },
  };
}

/** Meta delivers one message with its contacts[] (signed, to /meta/webhook); resolves once stored. */
async function writes(
  h: Mh,
  contacts: Record<string, unknown>[],
  message: { id: string },
): Promise<Json> {
  await postSigned(h, metaChange(h, { contacts, messages: [message] }));
  return await waitInbound(h, message.id);
}

async function contactOf(h: Mh, message: Json): Promise<Json> {
  const res = await h.request("GET", `/api/v2/contacts/${message.contactId}`);
  assert.equal(res.status, 200);
  return res.body.data;
}

async function contactCreatedCount(h: Mh): Promise<number> {
  return (await events(h)).filter((e) => e.type === "contact.created").length;
}

interface IdentityCase {
  name: string;
  /** Where the payload's shape comes from. */
  source: string;
  contacts: Record<string, unknown>[];
  sender: Record<string, string>;
  expected: {
    phoneNumber: string | null;
    userId: string;
    username: string | null;
  };
  parentUserId?: string;
}

const CASES: IdentityCase[] = [
  {
    name: "a username-only sender (no from, no wa_id)",
    source:
      "Meta, Business-scoped user IDs (developers.facebook.com/documentation/business-messaging/whatsapp/business-scoped-user-ids), reference §4.7",
    contacts: [{
      profile: { name: "Sofía", username: "sofi.cafe" },
      user_id: "US.13491208655302741918",
    }],
    sender: { from_user_id: "US.13491208655302741918" },
    expected: {
      phoneNumber: null,
      userId: "US.13491208655302741918",
      username: "sofi.cafe",
    },
  },
  {
    name: "a BSUID in from is a BSUID, not phone digits",
    source:
      "reference §4.7 (`from` holds no phone when the user withholds it) and issue 8",
    contacts: [{ profile: { name: "Leo" } }],
    sender: { from: "AR.8842193300417" },
    expected: { phoneNumber: null, userId: "AR.8842193300417", username: null },
  },
  {
    name: "both identifiers in one payload",
    source:
      "a real Cloud API text webhook (from, from_user_id, contacts[].wa_id, user_id, country_code) replayed by a public repository's webhook script; reference §4.7",
    contacts: [{
      profile: { name: "Krish Thakur" },
      wa_id: "919810218674",
      user_id: "IN.1410018717833190",
      country_code: "IN",
    }],
    sender: { from: "919810218674", from_user_id: "IN.1410018717833190" },
    expected: {
      phoneNumber: "+919810218674",
      userId: "IN.1410018717833190",
      username: null,
    },
  },
  {
    name: "a parent BSUID is kept beside the BSUID",
    source:
      "Meta, Business-scoped user IDs: linked portfolios add parent_user_id (US.ENT.…), reference §4.7",
    contacts: [{
      profile: { name: "Mia", username: "mia" },
      user_id: "US.20931208655302741000",
      parent_user_id: "US.ENT.11815799212886844830",
    }],
    sender: { from_user_id: "US.20931208655302741000" },
    expected: {
      phoneNumber: null,
      userId: "US.20931208655302741000",
      username: "mia",
    },
    parentUserId: "US.ENT.11815799212886844830",
  },
];

for (const c of CASES) {
  messagingTest(
    `inbound from ${c.name} is stored with its contact`,
    async (h) => {
      const message = text("Hola", c.sender);
      const stored = await writes(h, c.contacts, message);
      assert.deepEqual(stored.content, { text: "Hola" });
      const contact = await contactOf(h, stored);
      assert.deepEqual(
        {
          phoneNumber: contact.phoneNumber,
          userId: contact.userId,
          username: contact.username,
        },
        c.expected,
        `source: ${c.source}`,
      );
      const conversation = await getConversation(h, stored.conversationId);
      assert.deepEqual(conversation.contact, {
        id: contact.id,
        name: contact.name,
        ...c.expected,
      });
      const received = (await events(h)).find((e) =>
        e.type === "message.received"
      )!;
      assert.deepEqual(received.data.contact, {
        id: contact.id,
        name: contact.name,
        ...c.expected,
      });
      const row = await h.container.db.selectFrom("contacts")
        .select("parent_user_id").where("id", "=", contact.id)
        .executeTakeFirstOrThrow();
      assert.equal(row.parent_user_id, c.parentUserId ?? null);
      await waitPayloadsProcessed(h);
    },
  );
}

messagingTest(
  "one person writing by username, then with both ids, then by phone is one contact",
  async (h) => {
    // Shapes as in the cases above (Meta's BSUID doc, reference §4.7).
    const userId = "US.13491208655302741918";
    const profile = { name: "Sofía", username: "sofi.cafe" };
    const payloads: {
      contacts: Record<string, unknown>[];
      sender: Record<string, string>;
    }[] = [
      {
        contacts: [{ profile, user_id: userId }],
        sender: { from_user_id: userId },
      },
      {
        contacts: [{ profile, wa_id: "5491155550001", user_id: userId }],
        sender: { from: "5491155550001", from_user_id: userId },
      },
      {
        contacts: [{ profile, wa_id: "5491155550001" }],
        sender: { from: "5491155550001" },
      },
      {
        contacts: [{ profile, user_id: userId }],
        sender: { from_user_id: userId },
      },
    ];
    const stored: Json[] = [];
    for (const [i, p] of payloads.entries()) {
      const message = text(`m${i}`, p.sender);
      stored.push(await writes(h, p.contacts, message));
    }
    assert.equal(await countRows(h, "contacts"), 1);
    assert.equal(await contactCreatedCount(h), 1);
    assert.equal(new Set(stored.map((m) => m.conversationId)).size, 1);
    const contact = await contactOf(h, stored[0]);
    assert.equal(contact.phoneNumber, "+5491155550001");
    assert.equal(contact.userId, userId);
    assert.equal(contact.username, "sofi.cafe");
  },
);

/** The join runs on both engines: it moves rows between contacts and conversations. */
async function joinsTwoContacts(h: Mh): Promise<void> {
  const created = await h.request("POST", "/api/v2/contacts", {
    body: { phoneNumber: "+5491155550002", name: "Ana", tags: ["vip"] },
  });
  assert.equal(created.status, 201);
  const userId = "AR.5550002000111";
  const first = text("by username", { from_user_id: userId });
  const lone = await writes(h, [{
    profile: { name: "Ana", username: "ana" },
    user_id: userId,
  }], first);
  assert.notEqual(lone.contactId, created.body.data.id);
  assert.equal(await countRows(h, "contacts"), 2);

  const both = text("with both", {
    from: "5491155550002",
    from_user_id: userId,
  });
  const joined = await writes(h, [{
    profile: { name: "Ana", username: "ana" },
    wa_id: "5491155550002",
    user_id: userId,
  }], both);
  assert.equal(await countRows(h, "contacts"), 1);
  assert.equal(
    joined.contactId,
    created.body.data.id,
    "the older contact stays",
  );
  const contact = await contactOf(h, joined);
  assert.equal(contact.phoneNumber, "+5491155550002");
  assert.equal(contact.userId, userId);
  assert.deepEqual(contact.tags, ["vip"]);
  // The username contact's message moved into the one conversation.
  const moved =
    (await h.request("GET", `/api/v2/messages/${lone.id}`)).body.data;
  assert.equal(moved.contactId, contact.id);
  assert.equal(moved.conversationId, joined.conversationId);
  assert.equal(await countRows(h, "conversations"), 1);
  const conversation = await getConversation(h, joined.conversationId);
  assert.equal(conversation.unreadCount, 2);
  assert.equal(
    await contactCreatedCount(h),
    2,
    "no contact.created for a join",
  );
}

for (const engine of ["sqlite", "libsql"] as const) {
  messagingTest(
    `[${engine}] a payload with both ids joins a phone contact and a username contact into one`,
    joinsTwoContacts,
    { engine },
  );
}

messagingTest(
  "a change with bad messages stores the good ones and records why the others were skipped",
  async (h) => {
    // Good shapes: Meta's text message (reference §4.4) and the BSUID sender (§4.7).
    const good1 = text("good by phone", { from: "5491155550003" });
    const good2 = text("good by username", {
      from_user_id: "US.99912086553027",
    });
    const shortSender = text("bad", { from: "1234" });
    const plusSender = text("bad", { from: "+" });
    const noId = {
      from: "5491155550004",
      timestamp: unixNow(),
      type: "text",
      text: { body: "x" },
    };
    await postSigned(
      h,
      metaChange(h, {
        contacts: [
          { profile: { name: "Ana" }, wa_id: "5491155550003" },
          { profile: { name: "Bo" }, user_id: "US.99912086553027" },
        ],
        messages: [good1, shortSender, noId, plusSender, good2],
        statuses: [{ status: "delivered" }],
      }),
    );
    await waitInbound(h, good1.id);
    await waitInbound(h, good2.id);
    await waitPayloadsProcessed(h);
    assert.equal(await countRows(h, "messages"), 2);
    const phones = (await h.container.db.selectFrom("contacts")
      .select("phone_number").execute()).map((r) => r.phone_number);
    assert.deepEqual(phones.sort(), ["+5491155550003", null].sort());
    const stored = await h.container.db.selectFrom("inbound_payloads")
      .select(["error", "processed_at"]).executeTakeFirstOrThrow();
    assert.ok(stored.processed_at);
    assert.match(
      stored.error ?? "",
      new RegExp(
        `message "${shortSender.id}": sender "1234" is neither a phone number nor a business-scoped user id`,
      ),
    );
    assert.match(stored.error ?? "", new RegExp(`message "${plusSender.id}"`));
    assert.match(stored.error ?? "", /message without id: id:/);
    assert.match(stored.error ?? "", /status without id: id:/);
  },
);

messagingTest(
  "contacts and conversations are found by username or exact BSUID, and resolve takes a BSUID",
  async (h) => {
    const userId = "US.13491208655302741918";
    const message = text("Hola", { from_user_id: userId });
    const stored = await writes(h, [{
      profile: { name: "Sofía", username: "sofi.cafe" },
      user_id: userId,
    }], message);
    for (const search of ["SOFI.caf", userId]) {
      const contacts = await h.request(
        "GET",
        `/api/v2/contacts?search=${encodeURIComponent(search)}`,
      );
      assert.deepEqual(
        contacts.body.data.map((c: Json) => c.id),
        [stored.contactId],
        search,
      );
      const conversations = await h.request(
        "GET",
        `/api/v2/conversations?search=${encodeURIComponent(search)}`,
      );
      assert.deepEqual(
        conversations.body.data.map((c: Json) => c.id),
        [stored.conversationId],
        search,
      );
    }
    const none = await h.request("GET", "/api/v2/contacts?search=US.1349");
    assert.deepEqual(none.body.data, [], "a BSUID matches only whole");
    const resolved = await h.request(
      "GET",
      `/api/v2/conversations/resolve?phone=${encodeURIComponent(userId)}`,
    );
    assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
    assert.equal(resolved.body.data.conversationId, stored.conversationId);
  },
);

messagingTest(
  "an unreadable contacts entry or system error leaves the change's messages and statuses applied",
  async (h) => {
    // Meta's shapes (reference §4.3, §4.4, §4.5) with one contacts entry and
    // one system error of the wrong type beside them.
    await customerWrites(h, "+5491155550005");
    const id = await sendOk(h, textTo("+5491155550005", "Hola"));
    const sent = await h.waitForStatus(id, ["sent", "delivered", "read"]);
    const good = text("still stored", { from: "5491155550005" });
    await postSigned(
      h,
      metaChange(h, {
        contacts: [
          { profile: { name: "Broken" }, wa_id: 5491155550006 },
          { profile: { name: "Ana" }, wa_id: "5491155550005" },
        ],
        messages: [good],
        statuses: [{
          id: sent.waMessageId,
          status: "read",
          timestamp: unixNow(),
          recipient_id: "5491155550005",
        }],
        errors: [{ code: "131000", title: "Something went wrong" }],
      }),
    );
    await waitInbound(h, good.id);
    await h.waitForStatus(id, ["read"]);
    await waitPayloadsProcessed(h);
    const stored = await h.container.db.selectFrom("inbound_payloads")
      .select("error").where("body", "like", `%${good.id}%`)
      .executeTakeFirstOrThrow();
    assert.match(stored.error ?? "", /contact 0: wa_id:/);
  },
);

messagingTest(
  "a changed number brings a new BSUID: the contact takes it, so later username-only messages stay on it",
  async (h) => {
    // Reference §4.7: a phone number change makes a new BSUID; payload shapes as above.
    const profile = { name: "Ana" };
    const before = { wa_id: "5491155550011", user_id: "AR.1000000000011" };
    const after = { wa_id: "5491155550012", user_id: "AR.2000000000012" };
    const first = await writes(
      h,
      [{ profile, ...before }],
      text("hola", { from: before.wa_id, from_user_id: before.user_id }),
    );
    const system = {
      ...text("", { from: before.wa_id }),
      type: "system",
      system: {
        body: "User A changed from 5491155550011 to 5491155550012",
        new_wa_id: after.wa_id,
        type: "customer_changed_number",
      },
    };
    await writes(h, [{ profile, ...before }], system);
    // Meta may deliver a username-only message under the new BSUID before
    // one that pairs it with the new number; both end on the one contact.
    const early = await writes(
      h,
      [{ profile, user_id: after.user_id }],
      text("early", { from_user_id: after.user_id }),
    );
    await writes(
      h,
      [{ profile, ...after }],
      text("both", { from: after.wa_id, from_user_id: after.user_id }),
    );
    const later = await writes(
      h,
      [{ profile, user_id: after.user_id }],
      text("later", { from_user_id: after.user_id }),
    );
    assert.equal(later.contactId, first.contactId);
    assert.equal(await countRows(h, "contacts"), 1);
    const contact = await contactOf(h, later);
    assert.equal(contact.phoneNumber, "+5491155550012");
    assert.equal(contact.userId, after.user_id);
    const moved = (await h.request("GET", `/api/v2/messages/${early.id}`))
      .body.data;
    assert.equal(moved.contactId, first.contactId);
  },
);

import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import { createChannel } from "../../src/domain/channels/channel_service.ts";
import {
  insertContact,
  insertConversation,
  insertThread,
} from "./_conversation_fixtures.ts";

const API = "/api/v2";

const byPhone = (h: Harness, phone: string, key?: string) =>
  h.request(
    "GET",
    `${API}/conversations/by-phone/${encodeURIComponent(phone)}`,
    key ? { key } : {},
  );

const resolve = (h: Harness, query: Record<string, string>, key?: string) =>
  h.request(
    "GET",
    `${API}/conversations/resolve?${new URLSearchParams(query)}`,
    key ? { key } : {},
  );

/** Every spelling that must find "+54 9 11 2233-4455" for an AR account. */
const AR_SPELLINGS = [
  "+5491122334455",
  "5491122334455",
  "+541122334455",
  "541122334455",
  "+54 9 11 2233-4455",
  "+54 11 15 2233 4455",
  "011 15 2233-4455",
  "(011) 2233-4455",
  "1122334455",
  "11 2233-4455",
  "+54 9 11 15 2233 4455",
  "54 9 11 15 2233-4455",
];

for (const stored of ["+5491122334455", "+541122334455"]) {
  engineTest(
    `GET /conversations/by-phone finds a contact stored as ${stored} by every spelling`,
    async (h) => {
      const { conversationId } = await insertThread(h, { phoneNumber: stored });
      await insertThread(h, { phoneNumber: "+5491122334466" });
      for (const spelling of AR_SPELLINGS) {
        const res = await byPhone(h, spelling);
        assert.equal(res.status, 200, spelling);
        assert.equal(res.body.data.id, conversationId, spelling);
        assert.equal(res.body.data.contact.phoneNumber, stored);
      }
    },
  );
}

engineTest(
  "GET /conversations/by-phone puts bare digits in the account's country",
  async (h) => {
    const us = await h.makeTenant(`us-${crypto.randomUUID().slice(0, 6)}`, {
      country: "US",
    });
    const { conversationId } = await insertThread(h, {
      phoneNumber: "+12025550123",
      accountId: us.account.id,
      channelId: us.channel.id,
    });
    for (
      const spelling of ["2025550123", "(202) 555-0123", "+1 202 555 0123"]
    ) {
      const res = await byPhone(h, spelling, us.key);
      assert.equal(res.status, 200, spelling);
      assert.equal(res.body.data.id, conversationId);
    }
    // The AR tenant reads the same bare digits as an Argentine number.
    const ar = await byPhone(h, "2025550123");
    assert.equal(ar.status, 404);
  },
);

engineTest(
  "GET /conversations/by-phone returns the most recent conversation",
  async (h) => {
    const contactId = await insertContact(h, { phoneNumber: "+5491122334455" });
    const older = await insertConversation(h, {
      contactId,
      last_message_at: "2026-11-20T09:00:00.000Z",
    });
    const newer = await insertConversation(h, {
      contactId,
      channelId: null,
      last_message_at: "2026-11-20T10:00:00.000Z",
    });
    // Never messaged, created last: ranks after any conversation with messages.
    await insertConversation(h, { contactId, channelId: null });
    const res = await byPhone(h, "+5491122334455");
    assert.equal(res.body.data.id, newer);
    assert.notEqual(res.body.data.id, older);
  },
);

engineTest(
  "GET /conversations/by-phone rejects non-numbers and 404s unknown numbers",
  async (h) => {
    for (const bad of ["abc", "12", "+54 9 11 call me"]) {
      const res = await byPhone(h, bad);
      assert.equal(res.status, 400, bad);
      assert.equal(res.body.error.code, "INVALID_PHONE");
      assert.match(res.body.error.message, /is not a phone number/);
    }
    const none = await byPhone(h, "+5491199990000");
    assert.equal(none.status, 404);
    assert.equal(none.body.error.code, "NOT_FOUND");
    assert.equal(
      none.body.error.message,
      'Cannot find a conversation for phone number "+5491199990000"',
    );
  },
);

engineTest(
  "GET /conversations/resolve finds by phone, email and instagram",
  async (h) => {
    const ana = await insertThread(h, {
      phoneNumber: "+5491122334455",
      email: "Ana@Example.com",
      customFields: { instagram: "@Ana.Shop" },
    });
    const bob = await insertThread(h, {
      phoneNumber: "+5491199998888",
      customFields: { instagram: "bob_store" },
    });
    const cases: [Record<string, string>, string][] = [
      [{ phone: "011 15 2233-4455" }, ana.conversationId],
      [{ email: "ana@example.COM" }, ana.conversationId],
      [{ instagram: "ana.shop" }, ana.conversationId],
      [{ instagram: "@ANA.SHOP" }, ana.conversationId],
      [{ instagram: "@bob_store" }, bob.conversationId],
      [{ instagram: "BOB_STORE" }, bob.conversationId],
    ];
    for (const [query, expected] of cases) {
      const res = await resolve(h, query);
      assert.equal(res.status, 200, JSON.stringify(query));
      assert.deepEqual(res.body.data, {
        conversationId: expected,
        alternatives: [],
      }, JSON.stringify(query));
    }
    const none = await resolve(h, { email: "nobody@example.com" });
    assert.deepEqual(none.body.data, {
      conversationId: null,
      alternatives: [],
    });
    const bobLike = await resolve(h, { instagram: "bob" });
    assert.deepEqual(bobLike.body.data, {
      conversationId: null,
      alternatives: [],
    });
    // Several identifiers: any match counts, best first.
    const both = await resolve(h, {
      phone: "+5491199998888",
      email: "ana@example.com",
    });
    assert.equal(both.body.data.conversationId, bob.conversationId);
    assert.deepEqual(both.body.data.alternatives, [ana.conversationId]);
  },
);

engineTest(
  "GET /conversations/resolve prefers the given line or channel",
  async (h) => {
    const second = await createChannel(h.container, {
      accountId: h.tenant.account.id,
      phoneNumber: "+5491150000000",
      displayName: "Second line",
      upstreamPhoneNumberId: `9${Date.now()}`,
      wabaId: "555",
      accessToken: "token",
    });
    const contactId = await insertContact(h, { phoneNumber: "+5491122334455" });
    const onSecond = await insertConversation(h, {
      contactId,
      channelId: second.id,
      last_message_at: "2026-11-20T09:00:00.000Z",
    });
    const onFirst = await insertConversation(h, {
      contactId,
      last_message_at: "2026-11-20T11:00:00.000Z",
    });
    const noChannel = await insertConversation(h, {
      contactId,
      channelId: null,
      last_message_at: "2026-11-20T10:00:00.000Z",
    });
    const phone = "+5491122334455";
    const plain = await resolve(h, { phone });
    assert.deepEqual(plain.body.data, {
      conversationId: onFirst,
      alternatives: [noChannel, onSecond],
    });
    const preferring: Record<string, string>[] = [
      { phone, channel: second.id },
      { phone, line: "+54 9 11 5000-0000" },
      { phone, line: "1150000000" },
    ];
    for (const query of preferring) {
      const res = await resolve(h, query);
      assert.deepEqual(res.body.data, {
        conversationId: onSecond,
        alternatives: [onFirst, noChannel],
      }, JSON.stringify(query));
    }
    const unknownLine = await resolve(h, { phone, line: "+5491160000000" });
    assert.equal(unknownLine.body.data.conversationId, onFirst);
  },
);

engineTest(
  "GET /conversations/resolve respects agent visibility",
  async (h) => {
    const { token, agent } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Agent",
      visibility: "assigned",
    });
    const contactId = await insertContact(h, {
      phoneNumber: "+5491122334455",
      email: "ana@example.com",
    });
    const mine = await insertConversation(h, {
      contactId,
      assigned_to: agent.id,
      last_message_at: "2026-11-20T09:00:00.000Z",
    });
    await insertConversation(h, {
      contactId,
      channelId: null,
      last_message_at: "2026-11-20T10:00:00.000Z",
    });
    const res = await resolve(h, { email: "ana@example.com" }, token);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, { conversationId: mine, alternatives: [] });
    const other = await insertThread(h, { phoneNumber: "+5491199998888" });
    const hidden = await resolve(h, { phone: "+5491199998888" }, token);
    assert.deepEqual(hidden.body.data, {
      conversationId: null,
      alternatives: [],
    });
    const key = await resolve(h, { phone: "+5491199998888" });
    assert.equal(key.body.data.conversationId, other.conversationId);
  },
);

engineTest("GET /conversations/resolve validates its query", async (h) => {
  const cases: [Record<string, string>, number, string, RegExp][] = [
    [
      {},
      400,
      "VALIDATION_ERROR",
      /at least one of "phone", "email" or "instagram"/,
    ],
    [{ line: "+5491150000000" }, 400, "VALIDATION_ERROR", /at least one of/],
    [
      { phone: "abc" },
      400,
      "INVALID_PHONE",
      /Cannot read phone number "abc": it is not a phone number/,
    ],
    [{ email: "a@b.c", line: "xyz" }, 400, "INVALID_PHONE", /"xyz"/],
    [
      { email: "a@b.c", channel: "line-1" },
      400,
      "VALIDATION_ERROR",
      /"channel": must be a UUID/,
    ],
    [{ email: "" }, 400, "VALIDATION_ERROR", /"email"/],
    [
      { email: "a@b.c", name: "Ana" },
      400,
      "VALIDATION_ERROR",
      /Unrecognized key: "name"/,
    ],
  ];
  for (const [query, status, code, message] of cases) {
    const res = await resolve(h, query);
    assert.equal(res.status, status, JSON.stringify(query));
    assert.equal(res.body.error.code, code, JSON.stringify(query));
    assert.match(res.body.error.message, message, JSON.stringify(query));
  }
});

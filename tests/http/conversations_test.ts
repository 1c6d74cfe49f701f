import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import {
  ids,
  insertConversation,
  insertThread,
} from "./_conversation_fixtures.ts";

const API = "/api/v2";

engineTest(
  "GET /conversations/:id returns the conversation with its contact",
  async (h) => {
    const { contactId, conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
      name: "Ana Pérez",
      status: "pending",
      last_message_at: "2026-11-20T11:00:00.000Z",
      last_message_preview: "Hola",
      last_message_direction: "inbound",
      last_message_status: "received",
      last_message_id: crypto.randomUUID(),
      last_inbound_at: "2026-11-20T11:00:00.000Z",
      service_window_expires_at: "2026-11-21T11:00:00.000Z",
      unread_count: 3,
      created_at: "2026-11-20T10:00:00.000Z",
    });
    const res = await h.request(
      "GET",
      `${API}/conversations/${conversationId}`,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.data, {
      id: conversationId,
      contactId,
      phoneNumberId: h.tenant.channel.id,
      status: "pending",
      assignedTo: null,
      lastMessageAt: "2026-11-20T11:00:00.000Z",
      lastMessagePreview: "Hola",
      lastMessageDirection: "inbound",
      lastMessageStatus: "delivered",
      serviceWindowExpiresAt: "2026-11-21T11:00:00.000Z",
      unreadCount: 3,
      createdAt: "2026-11-20T10:00:00.000Z",
      contact: {
        id: contactId,
        phoneNumber: "+5491122334455",
        userId: null,
        username: null,
        name: "Ana Pérez",
      },
      referral: null,
    });
    assert.equal(typeof res.body.meta.requestId, "string");
  },
);

engineTest(
  "GET /conversations lists newest first with cursor meta",
  async (h) => {
    const a = await insertThread(h, { phoneNumber: "+5491100000001" });
    const b = await insertThread(h, { phoneNumber: "+5491100000002" });
    const c = await insertThread(h, { phoneNumber: "+5491100000003" });
    const res = await h.request("GET", `${API}/conversations`);
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body.data), [
      c.conversationId,
      b.conversationId,
      a.conversationId,
    ]);
    assert.equal(res.body.meta.cursor, null);
    assert.equal(res.body.meta.hasMore, false);
    assert.deepEqual(res.body.data[0].contact, {
      id: c.contactId,
      phoneNumber: "+5491100000003",
      userId: null,
      username: null,
      name: null,
    });

    const first = await h.request("GET", `${API}/conversations?limit=2`);
    assert.deepEqual(ids(first.body.data), [
      c.conversationId,
      b.conversationId,
    ]);
    assert.equal(first.body.meta.hasMore, true);
    assert.equal(typeof first.body.meta.cursor, "string");
  },
);

engineTest("GET /conversations filters by status", async (h) => {
  const open = await insertThread(h, { phoneNumber: "+5491100000001" });
  const closed = await insertThread(h, {
    phoneNumber: "+5491100000002",
    status: "closed",
  });
  await insertThread(h, { phoneNumber: "+5491100000003", status: "pending" });
  const res = await h.request("GET", `${API}/conversations?status=closed`);
  assert.deepEqual(ids(res.body.data), [closed.conversationId]);
  const opened = await h.request("GET", `${API}/conversations?status=open`);
  assert.deepEqual(ids(opened.body.data), [open.conversationId]);
});

engineTest(
  "GET /conversations searches the contact's name and phone",
  async (h) => {
    const ana = await insertThread(h, {
      phoneNumber: "+5491122334455",
      name: "Ana Pérez",
    });
    const bob = await insertThread(h, {
      phoneNumber: "+14155550100",
      name: "Bob 100% Real_Name",
    });
    await insertThread(h, { phoneNumber: "+5491199998888", name: null });
    const search = async (q: string) =>
      ids(
        (await h.request(
          "GET",
          `${API}/conversations?search=${encodeURIComponent(q)}`,
        )).body.data,
      );
    assert.deepEqual(await search("ana"), [ana.conversationId]);
    assert.deepEqual(await search("ANA P"), [ana.conversationId]);
    assert.deepEqual(await search("2233"), [ana.conversationId]);
    assert.deepEqual(await search("+549112233"), [ana.conversationId]);
    assert.deepEqual(await search("549112233"), [ana.conversationId]);
    assert.deepEqual(await search("+1 415 555"), [bob.conversationId]);
    // LIKE wildcards are literal characters in a search.
    assert.deepEqual(await search("100%"), [bob.conversationId]);
    assert.deepEqual(await search("e_l"), []);
    assert.deepEqual(await search("l_n"), [bob.conversationId]);
    assert.deepEqual(await search("%"), [bob.conversationId]);
    assert.deepEqual(await search("nobody"), []);
  },
);

engineTest(
  "PATCH /conversations/:id changes status and assignee",
  async (h) => {
    const { conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
    });
    const { agent } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Agent",
      visibility: "all",
    });
    const agentId = agent.id;
    const res = await h.request(
      "PATCH",
      `${API}/conversations/${conversationId}`,
      {
        body: { status: "resolved", assignedTo: agentId },
      },
    );
    assert.equal(res.status, 200);
    assert.equal(res.body.data.id, conversationId);
    assert.equal(res.body.data.status, "resolved");
    assert.equal(res.body.data.assignedTo, agentId);
    assert.equal(res.body.data.contact.phoneNumber, "+5491122334455");

    const unassign = await h.request(
      "PATCH",
      `${API}/conversations/${conversationId}`,
      { body: { assignedTo: null } },
    );
    assert.equal(unassign.status, 200);
    assert.equal(unassign.body.data.assignedTo, null);
    assert.equal(unassign.body.data.status, "resolved");
    const read = await h.request(
      "GET",
      `${API}/conversations/${conversationId}`,
    );
    assert.deepEqual(read.body.data, unassign.body.data);
  },
);

engineTest(
  "GET /contacts/:id/conversations lists the contact's conversations",
  async (h) => {
    const { contactId, conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
    });
    const second = await insertConversation(h, { contactId, channelId: null });
    await insertThread(h, { phoneNumber: "+5491199998888" });
    const res = await h.request(
      "GET",
      `${API}/contacts/${contactId}/conversations`,
    );
    assert.equal(res.status, 200);
    assert.deepEqual(ids(res.body.data), [second, conversationId]);
    assert.equal(res.body.data[0].phoneNumberId, null);
    assert.deepEqual(res.body.meta, {
      requestId: res.body.meta.requestId,
      cursor: null,
      hasMore: false,
    });
    const missing = await h.request(
      "GET",
      `${API}/contacts/${crypto.randomUUID()}/conversations`,
    );
    assert.equal(missing.status, 404);
    assert.equal(missing.body.error.code, "CONTACT_NOT_FOUND");
  },
);

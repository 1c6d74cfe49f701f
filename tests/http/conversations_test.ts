import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import {
  ids,
  insertConversation,
  insertMessage,
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
        name: "Ana Pérez",
      },
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
    const agentId = crypto.randomUUID();
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

engineTest("PATCH /conversations/:id rejects bad bodies", async (h) => {
  const { conversationId } = await insertThread(h, {
    phoneNumber: "+5491122334455",
  });
  const path = `${API}/conversations/${conversationId}`;
  const cases: [unknown, RegExp][] = [
    [{}, /at least one of "status" or "assignedTo"/],
    [{ status: "archived" }, /"status"/],
    [{ status: 1 }, /"status"/],
    [{ assignedTo: "agent-7" }, /"assignedTo": must be a UUID or null/],
    [{ assignedTo: 5 }, /"assignedTo"/],
    [{ status: "open", color: "red" }, /Unrecognized key: "color"/],
  ];
  for (const [body, message] of cases) {
    const res = await h.request("PATCH", path, { body });
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(res.body.error.code, "VALIDATION_ERROR");
    assert.match(res.body.error.message, message);
  }
  const text = await h.request("PATCH", path, {
    rawBody: "{not json",
    headers: { "content-type": "application/json" },
  });
  assert.equal(text.status, 400);
  const unchanged = await h.request("GET", path);
  assert.equal(unchanged.body.data.status, "open");
});

engineTest(
  "another account's conversations and contacts are not found",
  async (h) => {
    const other = await h.makeTenant(
      `other-${crypto.randomUUID().slice(0, 6)}`,
    );
    const theirs = await insertThread(h, {
      phoneNumber: "+5491122334455",
      accountId: other.account.id,
      channelId: other.channel.id,
    });
    await insertMessage(h, {
      conversationId: theirs.conversationId,
      contactId: theirs.contactId,
      accountId: other.account.id,
    });
    const mine = await insertThread(h, { phoneNumber: "+5491122334455" });

    const list = await h.request("GET", `${API}/conversations`);
    assert.deepEqual(ids(list.body.data), [mine.conversationId]);
    const id = theirs.conversationId;
    for (
      const [method, path, body] of [
        ["GET", `/conversations/${id}`],
        ["GET", `/conversations/${id}/messages`],
        ["PATCH", `/conversations/${id}`, { status: "closed" }],
      ] as const
    ) {
      const res = await h.request(method, API + path, body ? { body } : {});
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, "CONVERSATION_NOT_FOUND");
      assert.equal(res.body.error.message, `Cannot find conversation "${id}"`);
    }
    const contact = await h.request(
      "GET",
      `${API}/contacts/${theirs.contactId}/conversations`,
    );
    assert.equal(contact.status, 404);
    assert.equal(contact.body.error.code, "CONTACT_NOT_FOUND");
    const byPhone = await h.request(
      "GET",
      `${API}/conversations/by-phone/+5491122334455`,
    );
    assert.equal(byPhone.body.data.id, mine.conversationId);
    const theirList = await h.request("GET", `${API}/conversations`, {
      key: other.key,
    });
    assert.deepEqual(ids(theirList.body.data), [theirs.conversationId]);
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

engineTest(
  "scopes: conversations need conversations:read, contact lists contacts:read",
  async (h) => {
    const { contactId, conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
    });
    const contactsOnly = await h.makeKey(h.tenant.account.id, [
      "contacts:read",
    ]);
    const readOnly = await h.makeKey(h.tenant.account.id, [
      "conversations:read",
    ]);
    const denied = await h.request("GET", `${API}/conversations`, {
      key: contactsOnly,
    });
    assert.equal(denied.status, 403);
    assert.equal(denied.body.error.code, "INSUFFICIENT_SCOPE");
    const allowed = await h.request(
      "GET",
      `${API}/contacts/${contactId}/conversations`,
      { key: contactsOnly },
    );
    assert.equal(allowed.status, 200);
    const noContacts = await h.request(
      "GET",
      `${API}/contacts/${contactId}/conversations`,
      { key: readOnly },
    );
    assert.equal(noContacts.status, 403);
    const patch = await h.request(
      "PATCH",
      `${API}/conversations/${conversationId}`,
      {
        key: readOnly,
        body: { status: "closed" },
      },
    );
    assert.equal(patch.status, 403);
  },
);

engineTest(
  "an agent with visibility assigned sees only their conversations",
  async (h) => {
    const accountId = h.tenant.account.id;
    const { token: agentToken, agent } = await createAgent(h.container, {
      accountId,
      name: "Agent A",
      visibility: "assigned",
    });
    const { token: allToken } = await createAgent(h.container, {
      accountId,
      name: "Agent All",
      visibility: "all",
    });
    const theirs = await insertThread(h, {
      phoneNumber: "+5491122334455",
      assigned_to: agent.id,
    });
    const others = await insertThread(h, {
      phoneNumber: "+5491199998888",
      assigned_to: crypto.randomUUID(),
    });
    const unassigned = await insertThread(h, { phoneNumber: "+5491177776666" });
    await insertMessage(h, { ...others });

    const as = (key: string, path: string) =>
      h.request("GET", API + path, { key });
    const list = await as(agentToken, "/conversations");
    assert.equal(list.status, 200);
    assert.deepEqual(ids(list.body.data), [theirs.conversationId]);
    assert.equal(
      (await as(agentToken, `/conversations/${theirs.conversationId}`)).status,
      200,
    );
    for (
      const path of [
        `/conversations/${others.conversationId}`,
        `/conversations/${others.conversationId}/messages`,
        `/conversations/${unassigned.conversationId}`,
      ]
    ) {
      const res = await as(agentToken, path);
      assert.equal(res.status, 404, path);
      assert.equal(res.body.error.code, "CONVERSATION_NOT_FOUND");
    }
    const byPhone = await as(
      agentToken,
      "/conversations/by-phone/+5491199998888",
    );
    assert.equal(byPhone.status, 404);
    const all = await as(allToken, "/conversations");
    assert.equal(all.body.data.length, 3);
    // Agents never get write or contact routes.
    const patch = await h.request(
      "PATCH",
      `${API}/conversations/${theirs.conversationId}`,
      {
        key: agentToken,
        body: { status: "closed" },
      },
    );
    assert.equal(patch.status, 403);
    const contactList = await as(
      allToken,
      `/contacts/${theirs.contactId}/conversations`,
    );
    assert.equal(contactList.status, 403);
  },
);

engineTest("conversation routes reject malformed input with 400", async (h) => {
  const { conversationId } = await insertThread(h, {
    phoneNumber: "+5491122334455",
  });
  const cases: [string, RegExp][] = [
    [
      "/conversations/not-a-uuid",
      /Invalid path parameter "id": must be a UUID/,
    ],
    ["/conversations/123/messages", /Invalid path parameter "id"/],
    ["/contacts/abc/conversations", /Invalid path parameter "id"/],
    ["/conversations?limit=0", /Invalid query parameter "limit"/],
    ["/conversations?limit=101", /Invalid query parameter "limit"/],
    ["/conversations?limit=ten", /Invalid query parameter "limit"/],
    ["/conversations?limit=2.5", /Invalid query parameter "limit"/],
    ["/conversations?status=archived", /Invalid query parameter "status"/],
    ["/conversations?search=", /Invalid query parameter "search"/],
    ["/conversations?sort=asc", /Unrecognized key: "sort"/],
    ["/conversations?cursor=%%%garbage", /"cursor"/],
    ["/conversations?cursor=bm90LWpzb24", /"cursor"/],
    [`/conversations/${conversationId}/messages?limit=0`, /"limit"/],
    [`/conversations/${conversationId}/messages?cursor=xyz`, /"cursor"/],
    [`/conversations/${conversationId}/messages?order=desc`, /"order"/],
  ];
  for (const [path, message] of cases) {
    const res = await h.request("GET", API + path);
    assert.equal(res.status, 400, path);
    assert.equal(res.body.error.code, "VALIDATION_ERROR", path);
    assert.match(res.body.error.message, message, path);
  }
});

engineTest(
  "a tampered cursor is rejected, a valid one is accepted",
  async (h) => {
    for (let i = 0; i < 3; i++) {
      await insertThread(h, { phoneNumber: `+549110000000${i}` });
    }
    const page = await h.request("GET", `${API}/conversations?limit=1`);
    const cursor: string = page.body.meta.cursor;
    const next = await h.request(
      "GET",
      `${API}/conversations?limit=1&cursor=${cursor}`,
    );
    assert.equal(next.status, 200);
    const decoded = JSON.parse(
      atob(cursor.replace(/-/g, "+").replace(/_/g, "/")),
    );
    const tampered = [
      btoa(JSON.stringify(["not a date", decoded[1]])),
      btoa(JSON.stringify([decoded[0]])),
      btoa(JSON.stringify({ at: decoded[0], id: decoded[1] })),
      cursor.slice(0, -3),
    ];
    for (const bad of tampered) {
      const res = await h.request(
        "GET",
        `${API}/conversations?cursor=${encodeURIComponent(bad)}`,
      );
      assert.equal(res.status, 400, bad);
      assert.match(
        res.body.error.message,
        /is not a cursor returned by this list/,
      );
    }
  },
);

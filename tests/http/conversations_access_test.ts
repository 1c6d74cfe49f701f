import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import { ids, insertMessage, insertThread } from "./_conversation_fixtures.ts";

const API = "/api/v2";

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
    // Agents act on what they see (issue 29), and nothing else.
    const patch = (id: string) =>
      h.request("PATCH", `${API}/conversations/${id}`, {
        key: agentToken,
        body: { status: "pending" },
      });
    assert.equal((await patch(theirs.conversationId)).status, 200);
    assert.equal((await patch(others.conversationId)).status, 404);
    assert.equal(
      (await as(allToken, `/contacts/${theirs.contactId}/conversations`))
        .status,
      200,
    );
    assert.equal(
      (await as(agentToken, `/contacts/${unassigned.contactId}/conversations`))
        .status,
      404,
    );
  },
);

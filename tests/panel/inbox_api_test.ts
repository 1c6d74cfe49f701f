// GET /api/v1/conversations, /api/v1/conversations/:id/messages and
// /api/v1/agents: what the panel's list and thread read (issue 29).
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import { inboxQuery } from "../../src/domain/conversations/conversation_repo.ts";
import { toDbTime } from "../../src/db/time.ts";
import { insertMessage, insertThread } from "../http/_conversation_fixtures.ts";

const HOUR = 3600_000;

async function thread(
  h: Harness,
  phone: string,
  fields: Record<string, unknown> = {},
) {
  return await insertThread(h, { phoneNumber: phone, ...fields });
}

engineTest(
  "the inbox lists by last activity with keyset pages, filters and search by name, phone or e-mail",
  async (h) => {
    const now = h.clock.now().getTime();
    const at = (hoursAgo: number) => toDbTime(new Date(now - hoursAgo * HOUR));
    const { agent, token } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Ana",
      visibility: "all",
    });
    const old = await thread(h, "+5491100000001", {
      last_message_at: at(5),
      unread_count: 2,
      service_window_expires_at: toDbTime(new Date(now + HOUR)),
    });
    const recent = await thread(h, "+5491100000002", {
      last_message_at: at(1),
      assigned_to: agent.id,
      status: "pending",
      service_window_expires_at: toDbTime(new Date(now + 10 * HOUR)),
    });
    const quiet = await thread(h, "+5491100000003"); // no messages: its creation
    await h.container.db.updateTable("contacts")
      .set({ name: "Zoe Quiet", email: "zoe@example.com" })
      .where("id", "=", quiet.contactId).execute();
    const list = async (query = "") =>
      await h.request("GET", `/api/v1/conversations${query}`, { key: token });
    const ids = (res: { body: { data: { id: string }[] } }) =>
      res.body.data.map((c) => c.id);

    const all = await list();
    assert.equal(all.status, 200, JSON.stringify(all.body));
    assert.deepEqual(ids(all), [
      quiet.conversationId,
      recent.conversationId,
      old.conversationId,
    ]);
    assert.equal(all.body.hasMore, false);
    assert.equal(all.body.cursor, null);
    // Keyset pages of one.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { body: { data: { id: string }[]; cursor: string | null } } =
        await list(`?limit=1${cursor ? `&cursor=${cursor}` : ""}`);
      seen.push(...ids(page));
      cursor = page.body.cursor;
    } while (cursor);
    assert.deepEqual(seen, ids(all));

    assert.deepEqual(ids(await list("?assignee=me")), [recent.conversationId]);
    assert.deepEqual(ids(await list("?assignee=none")), [
      quiet.conversationId,
      old.conversationId,
    ]);
    assert.deepEqual(ids(await list("?unread=true")), [old.conversationId]);
    assert.deepEqual(ids(await list("?windowClosing=true")), [
      old.conversationId,
    ]);
    assert.deepEqual(ids(await list("?status=pending")), [
      recent.conversationId,
    ]);
    assert.deepEqual(ids(await list("?search=zoe%40example")), [
      quiet.conversationId,
    ]);
    assert.deepEqual(ids(await list("?search=zoe")), [quiet.conversationId]);
    assert.deepEqual(ids(await list("?search=00000002")), [
      recent.conversationId,
    ]);
    // A key has no "me"; unknown parameters are refused.
    assert.equal(
      (await h.request("GET", "/api/v1/conversations?assignee=me")).status,
      400,
    );
    assert.equal((await list("?x=1")).status, 400);
  },
);

engineTest(
  "a thread opens at its newest messages and pages back",
  async (h) => {
    const { contactId, conversationId } = await thread(h, "+5491100000009");
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      made.push(
        await insertMessage(h, {
          conversationId,
          contactId,
          content: { body: `m${i}` },
        }),
      );
    }
    const page = await h.request(
      "GET",
      `/api/v1/conversations/${conversationId}/messages?limit=2`,
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(
      page.body.data.map((m: { id: string }) => m.id),
      made.slice(3),
    );
    assert.equal(page.body.hasMore, true);
    const older = await h.request(
      "GET",
      `/api/v1/conversations/${conversationId}/messages?limit=2&cursor=${page.body.cursor}`,
    );
    assert.deepEqual(
      older.body.data.map((m: { id: string }) => m.id),
      made.slice(1, 3),
    );
  },
);

engineTest("the agents list names the account's active agents", async (h) => {
  const accountId = h.tenant.account.id;
  await createAgent(h.container, { accountId, name: "Ana", visibility: "all" });
  await createAgent(h.container, {
    accountId,
    name: "Bruno",
    visibility: "assigned",
  });
  const res = await h.request("GET", "/api/v1/agents");
  assert.deepEqual(
    res.body.data.map((
      a: { name: string; visibility: string },
    ) => [a.name, a.visibility]),
    [["Ana", "all"], ["Bruno", "assigned"]],
  );
});

engineTest(
  "the inbox query reads conversations_activity_idx without a sort",
  async (h) => {
    if (h.engine !== "sqlite") return;
    const compiled = inboxQuery(h.container.db, {
      viewer: { accountId: h.tenant.account.id },
      filter: {},
      limit: 51,
    }).compile();
    const plan = await h.container.db.executeQuery({
      ...compiled,
      sql: `explain query plan ${compiled.sql}`,
    });
    const text = plan.rows.map((r) => (r as { detail: string }).detail).join(
      "\n",
    );
    assert.match(text, /conversations_activity_idx/);
    assert.doesNotMatch(text, /TEMP B-TREE/);
  },
);

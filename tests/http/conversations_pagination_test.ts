import assert from "node:assert/strict";
import { CompiledQuery } from "kysely";
import { engineTest, type Harness } from "../_harness.ts";
import {
  conversationsOfContactsQuery,
  listContactConversationsQuery,
  listConversationsQuery,
} from "../../src/domain/conversations/conversation_repo.ts";
import { conversationMessagesQuery } from "../../src/domain/messages/message_read_repo.ts";
import type { Executor } from "../../src/db/schema.ts";
import {
  insertContact,
  insertConversation,
  insertMessage,
  insertThread,
  tick,
} from "./_conversation_fixtures.ts";

const API = "/api/v2";

interface Row {
  id: string;
  createdAt: string;
}

const byNewest = (a: Row, b: Row) =>
  a.createdAt === b.createdAt
    ? (a.id < b.id ? 1 : -1)
    : (a.createdAt < b.createdAt ? 1 : -1);

/** Follows cursors to the end; `between` runs after each page that has more. */
async function walk(
  h: Harness,
  path: string,
  between: (page: number) => Promise<void> = async () => {},
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  for (let n = 0; n < 100; n++) {
    const sep = path.includes("?") ? "&" : "?";
    const url: string = cursor === null
      ? path
      : `${path}${sep}cursor=${encodeURIComponent(cursor)}`;
    const res = await h.request("GET", API + url);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    pages.push(res.body.data.map((r: { id: string }) => r.id));
    assert.equal(res.body.meta.hasMore, res.body.meta.cursor !== null);
    if (!res.body.meta.hasMore) return pages;
    cursor = res.body.meta.cursor;
    await between(n);
  }
  throw new Error(`Pagination of ${path} did not end`);
}

engineTest(
  "GET /conversations pages newest first, each row once, while rows are added",
  async (h) => {
    const rows: Row[] = [];
    const tie = "2026-11-20T12:00:00.500Z";
    for (let i = 0; i < 11; i++) {
      // Four rows share one creation time: the id breaks the tie.
      const createdAt = i % 3 === 0 ? tie : tick(h, 100);
      const { conversationId } = await insertThread(h, {
        phoneNumber: `+54911000000${String(i).padStart(2, "0")}`,
        created_at: createdAt,
      });
      rows.push({ id: conversationId, createdAt });
    }
    const expected = rows.sort(byNewest).map((r) => r.id);
    const added: string[] = [];
    const pages = await walk(h, "/conversations?limit=3", async (n) => {
      // New conversations are newer than every row already listed, including
      // one created in the same millisecond as the newest row.
      const createdAt = n === 0 ? rows[0]!.createdAt : tick(h);
      added.push(
        (await insertThread(h, {
          phoneNumber: `+54911999999${n}`,
          created_at: createdAt,
        })).conversationId,
      );
    });
    assert.deepEqual(pages.map((p) => p.length), [3, 3, 3, 2]);
    assert.deepEqual(pages.flat(), expected);
    assert.equal(added.length, 3);

    const fresh = await walk(h, "/conversations?limit=100");
    assert.deepEqual(fresh.flat().slice(added.length), expected);
  },
);

engineTest("GET /conversations pages a status filter to the end", async (h) => {
  const open: string[] = [];
  for (let i = 0; i < 7; i++) {
    const status = i % 2 === 0 ? "open" : "closed";
    const { conversationId } = await insertThread(h, {
      phoneNumber: `+5491100000${i}`,
      status,
    });
    if (status === "open") open.push(conversationId);
  }
  const pages = await walk(h, "/conversations?status=open&limit=2");
  assert.deepEqual(pages.flat(), open.reverse());
  assert.deepEqual(pages.map((p) => p.length), [2, 2]);
});

engineTest(
  "GET /conversations/:id/messages pages oldest first, each row once, while messages arrive",
  async (h) => {
    const thread = await insertThread(h, { phoneNumber: "+5491122334455" });
    const other = await insertThread(h, { phoneNumber: "+5491199998888" });
    const rows: Row[] = [];
    const tie = tick(h, 10);
    for (let i = 0; i < 7; i++) {
      const createdAt = i < 3 ? tie : tick(h, 10);
      const id = await insertMessage(h, { ...thread, created_at: createdAt });
      rows.push({ id, createdAt });
      await insertMessage(h, { ...other });
    }
    const expected = rows.sort(byNewest).reverse().map((r) => r.id);
    const added: string[] = [];
    const path = `/conversations/${thread.conversationId}/messages?limit=2`;
    const pages = await walk(h, path, async (n) => {
      if (n < 3) added.push(await insertMessage(h, { ...thread }));
    });
    assert.deepEqual(pages.flat(), [...expected, ...added]);
    assert.equal(added.length, 3);
    assert.equal(new Set(pages.flat()).size, 10);
  },
);

engineTest(
  "GET /contacts/:id/conversations pages newest first while rows are added",
  async (h) => {
    const contactId = await insertContact(h, { phoneNumber: "+5491122334455" });
    await insertThread(h, { phoneNumber: "+5491199998888" });
    // One conversation on the tenant's channel, the rest without a channel.
    const rows: string[] = [await insertConversation(h, { contactId })];
    for (let i = 0; i < 4; i++) {
      rows.push(await insertConversation(h, { contactId, channelId: null }));
    }
    const pages = await walk(
      h,
      `/contacts/${contactId}/conversations?limit=2`,
      async () => {
        await insertConversation(h, { contactId, channelId: null });
      },
    );
    assert.deepEqual(pages.flat(), rows.reverse());
  },
);

async function plan(db: Executor, query: { compile(): CompiledQuery }) {
  const compiled = query.compile();
  const result = await db.executeQuery<{ detail: string }>(
    CompiledQuery.raw(
      `explain query plan ${compiled.sql}`,
      [...compiled.parameters],
    ),
  );
  return result.rows.map((r) => r.detail).join("\n");
}

/** The plan of a batch's conversation lookup for `n` known recipients. */
function knownRecipientsPlan(h: Harness, n: number): Promise<string> {
  const ids = Array.from({ length: n }, () => crypto.randomUUID());
  return plan(h.container.db, {
    compile: () =>
      conversationsOfContactsQuery(h.container.db, h.tenant.account.id, ids),
  });
}

// Without statistics SQLite walked the account's status index for this
// statement and tested every conversation of the account (a batch to known
// recipients cost more the more conversations the account had).
engineTest(
  "a batch reads its known recipients' conversations by contact, not by walking the account's",
  async (h) => {
    const text = await knownRecipientsPlan(h, 2);
    assert.match(text, /SEARCH cv USING INDEX \w+ \(contact_id=\?\)/, text);
    assert.doesNotMatch(text, /account_id=\?/, text);
  },
);

// The batch has read these contacts already (their fields go into each
// conversation from there): a join would look each one up again by id.
engineTest(
  "a batch reads its known recipients' conversations without looking their contacts up again",
  async (h) => {
    const text = await knownRecipientsPlan(h, 1);
    assert.doesNotMatch(text, /\bct\b|contacts/, text);
  },
);

engineTest("cursor list queries are served by their indexes", async (h) => {
  const db = h.container.db;
  const viewer = { accountId: h.tenant.account.id };
  const after = { at: "2026-11-20T12:00:00.000Z", id: crypto.randomUUID() };
  const expectations: [string, { compile(): CompiledQuery }, string][] = [
    [
      "list",
      listConversationsQuery(db, { viewer, limit: 51, after }),
      "cv USING INDEX conversations_list_idx (account_id=? AND (created_at,id)<(?,?))",
    ],
    [
      "list by status",
      listConversationsQuery(db, { viewer, limit: 51, status: "open", after }),
      "cv USING INDEX conversations_status_idx (account_id=? AND status=? AND (created_at,id)<(?,?))",
    ],
    [
      "list searched, agent view",
      listConversationsQuery(db, {
        viewer: { ...viewer, onlyAssignedTo: crypto.randomUUID() },
        limit: 51,
        search: "ana",
      }),
      "cv USING INDEX conversations_list_idx (account_id=?)",
    ],
    [
      "contact conversations",
      listContactConversationsQuery(db, {
        viewer,
        contactId: crypto.randomUUID(),
        limit: 51,
        after,
      }),
      // The unique (contact_id, channel_id) index: a contact has at most one
      // conversation per channel, so sorting them is sorting a handful.
      "cv USING INDEX sqlite_autoindex_conversations_2 (contact_id=?)",
    ],
    [
      "messages",
      conversationMessagesQuery(db, {
        accountId: viewer.accountId,
        conversationId: crypto.randomUUID(),
        limit: 51,
        after,
      }),
      "messages USING INDEX messages_conversation_idx (conversation_id=? AND (created_at,id)>(?,?))",
    ],
  ];
  for (const [name, query, expected] of expectations) {
    const text = await plan(db, query);
    assert.ok(text.includes(`SEARCH ${expected}`), `${name}:\n${text}`);
    if (name === "contact conversations") {
      // Sorted, but only the contact's rows: never a walk of the account's.
      assert.ok(!text.includes("account_id=?"), `${name}:\n${text}`);
      continue;
    }
    assert.ok(!text.includes("TEMP B-TREE"), `${name} sorts:\n${text}`);
  }
});

import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { assertErrorBody } from "../http/_routes.ts";
import { createContact, type Json, nextPhone } from "../_support/webhooks.ts";

async function page(h: Harness, query: string, key?: string) {
  const res = await h.request(
    "GET",
    `/api/v2/events${query}`,
    key ? { key } : {},
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** Follows meta.cursor until a page comes back empty; returns every item seen. */
async function readAll(h: Harness, start: string | null, limit: number) {
  const items: Json[] = [];
  let cursor = start;
  for (;;) {
    const body = await page(
      h,
      `?limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`,
    );
    items.push(...body.data);
    cursor = body.meta.cursor;
    if (body.data.length === 0) return { items, cursor };
  }
}

engineTest(
  "GET /events returns every event oldest first with its webhook data, exactly once across pages while events are written",
  async (h) => {
    const first = await createContact(h, nextPhone());
    const seen: Json[] = [];
    let cursor: string | null = null;
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 40; i++) await createContact(h, nextPhone());
      writing = false;
    })();
    // Read while the writer runs, following the cursor (an empty page keeps it).
    while (writing) {
      const body = await page(
        h,
        `?limit=3${cursor ? `&cursor=${cursor}` : ""}`,
      );
      seen.push(...body.data);
      cursor = body.meta.cursor ?? cursor;
      await new Promise((r) => setTimeout(r, 0));
    }
    await writer;
    const rest = await readAll(h, cursor, 7);
    seen.push(...rest.items);

    const ids = seen.map((e) => e.eventId);
    assert.equal(new Set(ids).size, ids.length, "no event twice");
    const stored = await h.container.db.selectFrom("events").select([
      "id",
      "seq",
    ])
      .where("account_id", "=", h.tenant.account.id).orderBy("seq").execute();
    assert.deepEqual(ids, stored.map((r) => r.id), "every event, in order");
    assert.equal(seen.length, 41);
    assert.equal(seen[0].type, "contact.created");
    assert.deepEqual(seen[0].data, first, "data has the webhook shape");
    assert.equal(typeof seen[0].createdAt, "string");
    // At the end the cursor still points past the last event, for the next poll.
    const tail = await page(h, `?cursor=${rest.cursor}`);
    assert.deepEqual(tail.data, []);
    assert.equal(tail.meta.hasMore, false);
    assert.equal(tail.meta.cursor, rest.cursor);
  },
);

engineTest(
  "GET /events filters by type, stays in its account and rejects foreign cursors",
  async (h) => {
    await createContact(h, nextPhone());
    const other = await h.makeTenant(`feed-${crypto.randomUUID().slice(0, 6)}`);
    await h.request("POST", "/api/v2/contacts", {
      key: other.key,
      body: { phoneNumber: nextPhone() },
    });
    const mine = await page(h, "?type=contact.created");
    assert.equal(mine.data.length, 1);
    const none = await page(h, "?type=message.received,conversation.created");
    assert.equal(none.data.length, 0);
    const theirs = await page(h, "", other.key);
    assert.equal(theirs.data.length, 1);
    assert.notEqual(theirs.data[0].eventId, mine.data[0].eventId);
    const badType = await h.request(
      "GET",
      "/api/v2/events?type=message.deleted",
    );
    assertErrorBody(badType, 400, "VALIDATION_ERROR");
    const badCursor = await h.request("GET", "/api/v2/events?cursor=abc");
    assertErrorBody(badCursor, 400, "VALIDATION_ERROR");
    const readOnly = await h.makeKey(h.tenant.account.id, ["contacts:read"]);
    const denied = await h.request("GET", "/api/v2/events", { key: readOnly });
    assertErrorBody(denied, 403, "INSUFFICIENT_SCOPE");
  },
);

import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { insertThread } from "./_conversation_fixtures.ts";

const API = "/api/v2";

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

// GET /panel/events (issue 29): the event feed as Server-Sent Events, with
// the internal kinds the panel needs, resumable by cursor, narrowed to what
// the agent sees; GET /events and webhooks keep exactly the spec's four.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { createHarness } from "../_harness.ts";
import {
  createAgent,
  revokeAgent,
} from "../../src/domain/accounts/account_service.ts";
import { createApp } from "../../src/http/app.ts";
import { serve } from "../../src/lifecycle.ts";
import { routeTest, seedTenant } from "../http/_routes.ts";
import { openEvents, sessionCookie, SseReader } from "./_sse.ts";
import { within } from "../e2e/_process.ts";

const SPEC_KINDS = [
  "message.received",
  "message.status_changed",
  "conversation.created",
  "contact.created",
];

routeTest(
  "the stream carries sends, status and assignee changes and reads; GET /events and webhooks keep the spec's four kinds",
  async (h) => {
    const fx = await seedTenant(h, h.tenant, { label: "ev" });
    const { agent } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Ana",
      visibility: "all",
    });
    const cookie = await sessionCookie(h, agent);
    const { headers, reader } = await openEvents(h, cookie);
    assert.equal(headers.get("content-type"), "text/event-stream");
    await reader.until((e) => e.some((x) => x.event === "hello"), "hello");

    const sent = await h.request("POST", "/api/v2/messages", {
      body: {
        phoneNumberId: fx.tenant.channel.id,
        to: fx.contactPhone,
        type: "text",
        text: { body: "¿Te ayudo?" },
      },
    });
    assert.equal(sent.status, 201);
    const patched = await h.request(
      "PATCH",
      `/api/v2/conversations/${fx.conversationId}`,
      { body: { status: "pending", assignedTo: agent.id } },
    );
    assert.equal(patched.status, 200);
    const read = await h.request(
      "POST",
      `/api/v2/conversations/${fx.conversationId}/read`,
    );
    assert.equal(read.status, 200);
    await reader.until(
      (e) => e.some((x) => x.event === "conversation.read"),
      "the three internal events",
    );
    const kinds = reader.events.filter((e) => e.event !== "hello").map((e) =>
      e.event
    );
    assert.deepEqual(kinds, [
      "message.created",
      "conversation.updated",
      "conversation.read",
    ]);
    const [created, updated] = reader.of(
      "message.created",
      "conversation.updated",
    ).map((e) => JSON.parse(e.data));
    assert.equal(created.id, sent.body.data.id);
    assert.deepEqual(created.content, { text: "¿Te ayudo?" });
    assert.equal(updated.status, "pending");
    assert.equal(updated.previousStatus, "open");
    assert.equal(updated.assignedTo, agent.id);
    assert.equal(updated.previousAssignedTo, null);
    // Each id is a feed cursor: strictly increasing, GET /events' format.
    const ids = reader.events.filter((e) => e.id).map((e) =>
      Number(atob(e.id!).split(":")[1])
    );
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b));
    await reader.cancel();

    const feed = await h.request("GET", "/api/v2/events?limit=100");
    assert.equal(feed.status, 200);
    assert.ok(feed.body.data.length > 0);
    for (const item of feed.body.data) {
      assert.ok(SPEC_KINDS.includes(item.type), item.type);
    }
    const internal = await h.request(
      "GET",
      "/api/v2/events?type=message.created",
    );
    assert.equal(internal.status, 400);
    // The fixture's two subscriptions got nothing of the internal kinds.
    const delivered = await h.container.db.selectFrom("webhook_deliveries")
      .select("event").execute();
    for (const row of delivered) {
      assert.ok(SPEC_KINDS.includes(row.event), row.event);
    }
  },
  { engines: ["sqlite"] },
);

routeTest(
  "a reconnect resumes after Last-Event-ID or ?after=, once and in order; a pruned cursor gets reset",
  async (h) => {
    const fx = await seedTenant(h, h.tenant, { label: "rs" });
    const { agent } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Ana",
      visibility: "all",
    });
    const cookie = await sessionCookie(h, agent);
    const send = async (text: string) => {
      const res = await h.request("POST", "/api/v2/messages", {
        body: {
          phoneNumberId: fx.tenant.channel.id,
          to: fx.contactPhone,
          type: "text",
          text: { body: text },
        },
      });
      assert.equal(res.status, 201);
    };
    const first = await openEvents(h, cookie);
    await first.reader.until((e) => e.length > 0, "hello");
    await send("one");
    await first.reader.until((e) => e.length > 1, "one");
    const cursor = first.reader.of("message.created")[0]!.id!;
    await first.reader.cancel();
    // Sent while no stream is open.
    await send("two");
    await send("three");
    const texts = (r: SseReader) =>
      r.of("message.created").map((e) => JSON.parse(e.data).content.text);
    for (const resume of [{ lastEventId: cursor }, { after: cursor }]) {
      const again = await openEvents(h, cookie, resume);
      await again.reader.until(
        (e) => e.filter((x) => x.event === "message.created").length >= 2,
        "the two missed sends",
      );
      assert.deepEqual(texts(again.reader), ["two", "three"]);
      await again.reader.cancel();
    }
    // Not a cursor: 400 before any stream starts.
    const bad = await h.request("GET", "/panel/events?after=nope", {
      key: null,
      headers: { cookie },
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error.code, "VALIDATION_ERROR");
    // The cursor's event was pruned (older than retention): reset, then live.
    const seq = Number(atob(cursor).split(":")[1]);
    await sql`delete from events where seq <= ${seq}`.execute(
      h.container.db,
    );
    const reset = await openEvents(h, cookie, { after: cursor });
    await reset.reader.until((e) => e.length >= 2, "reset and hello");
    assert.equal(reset.reader.events[0]!.event, "reset");
    assert.ok(reset.reader.events[0]!.id);
    await send("four");
    await reset.reader.until(
      (e) => e.some((x) => x.event === "message.created"),
      "four",
    );
    assert.deepEqual(texts(reset.reader), ["four"]);
    await reset.reader.cancel();
  },
  { engines: ["sqlite"] },
);

routeTest(
  "an assigned agent's stream shows only its conversations, and the one taken from it",
  async (h) => {
    const fx = await seedTenant(h, h.tenant, { label: "as" });
    const accountId = h.tenant.account.id;
    const { agent: mine } = await createAgent(h.container, {
      accountId,
      name: "Mine",
      visibility: "assigned",
    });
    const { agent: other } = await createAgent(h.container, {
      accountId,
      name: "Other",
      visibility: "all",
    });
    const { reader } = await openEvents(h, await sessionCookie(h, mine));
    await reader.until((e) => e.length > 0, "hello");
    const send = (text: string) =>
      h.request("POST", "/api/v2/messages", {
        body: {
          phoneNumberId: fx.tenant.channel.id,
          to: fx.contactPhone,
          type: "text",
          text: { body: text },
        },
      });
    const patch = (assignedTo: string) =>
      h.request("PATCH", `/api/v2/conversations/${fx.conversationId}`, {
        body: { assignedTo },
      });
    await send("not yours");
    assert.equal((await patch(mine.id)).status, 200);
    await send("yours");
    assert.equal((await patch(other.id)).status, 200);
    await send("not yours again");
    await reader.until(
      (e) => e.filter((x) => x.event === "conversation.updated").length >= 2,
      "both assignment changes",
    );
    // A last visible marker: the next change of its own conversation.
    assert.equal((await patch(mine.id)).status, 200);
    await reader.until(
      (e) => e.filter((x) => x.event === "conversation.updated").length >= 3,
      "the third change",
    );
    const seen = reader.events.filter((e) => e.event !== "hello").map((e) =>
      e.event === "message.created"
        ? JSON.parse(e.data).content.text
        : `${e.event}:${
          JSON.parse(e.data).assignedTo === mine.id ? "mine" : "other"
        }`
    );
    assert.deepEqual(seen, [
      "conversation.updated:mine",
      "yours",
      "conversation.updated:other",
      "conversation.updated:mine",
    ]);
    await reader.cancel();
  },
  { engines: ["sqlite"] },
);

Deno.test("logout and revoking the agent close its open streams", async () => {
  await using h = await createHarness();
  const { agent } = await createAgent(h.container, {
    accountId: h.tenant.account.id,
    name: "Ana",
    visibility: "all",
  });
  const cookie = await sessionCookie(h, agent);
  const a = await openEvents(h, cookie);
  await a.reader.until((e) => e.length > 0, "hello");
  const out = await h.request("POST", "/panel/logout", {
    key: null,
    headers: { cookie, "sec-fetch-site": "same-origin" },
  });
  assert.equal(out.status, 200);
  await within(a.reader.done, 5_000, "the stream to end at logout");

  const b = await openEvents(h, await sessionCookie(h, agent));
  await b.reader.until((e) => e.length > 0, "hello");
  await revokeAgent(h.container, agent.id);
  await within(b.reader.done, 10_000, "the stream to end at revoke");
  assert.equal(h.container.streams.size, 0);
});

Deno.test("shutdown closes open event streams before draining, so a stop never hangs on them", async () => {
  await using h = await createHarness({
    env: { PORT: "0", HOST: "127.0.0.1" },
  });
  const { agent } = await createAgent(h.container, {
    accountId: h.tenant.account.id,
    name: "Ana",
    visibility: "all",
  });
  const cookie = await sessionCookie(h, agent);
  const running = serve(h.container, createApp(h.container));
  const res = await fetch(`http://127.0.0.1:${running.port}/panel/events`, {
    headers: { cookie },
  });
  assert.equal(res.status, 200);
  const reader = new SseReader(res.body!);
  await reader.until((e) => e.length > 0, "hello");
  await within(running.stop(), 5_000, "the server to stop");
  await within(reader.done, 5_000, "the stream to end");
  const after = await fetch(`http://127.0.0.1:${running.port}/panel/events`, {
    headers: { cookie },
  }).catch((err) => err);
  assert.ok(after instanceof Error, "the server no longer listens");
});

// What an agent may do on every route (issue 29): the table docs/panel.md shows
// under "What agents may do", walked for a key, an agent with visibility
// `all` and one with visibility `assigned`. Every operation of the OpenAPI
// document and every /api/v1 route must be in the table, so a new route
// cannot be added without deciding what agents may do there.
import assert from "node:assert/strict";
import type { Harness } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import {
  apiOperations,
  type ApiRequest,
  assertErrorBody,
  buildRequest,
  type Fixture,
  loadDocument,
  routeTest,
  seedTenant,
  send,
  stringsIn,
  templateSend,
} from "./_routes.ts";

/**
 * `yes`: on any of the account's rows. `visible`: on the conversations the
 * agent can see (and their messages, contacts and media); others are 404, or
 * left out of a list. `no`: 403 INSUFFICIENT_SCOPE.
 */
type Access = "yes" | "visible" | "no";

/** [route, agent with visibility all, agent with visibility assigned], in docs/panel.md's order. */
export const AGENT_ACCESS: [string, Access, Access][] = [
  ["GET /api/v2/account", "yes", "yes"],
  ["GET /api/v2/channels", "yes", "yes"],
  ["GET /api/v2/templates", "yes", "yes"],
  ["GET /api/v2/templates/{id}", "yes", "yes"],
  ["GET /api/v2/templates/by-name/{name}", "yes", "yes"],
  ["GET /api/v2/conversations", "visible", "visible"],
  ["GET /api/v2/conversations/by-phone/{phone}", "visible", "visible"],
  ["GET /api/v2/conversations/resolve", "visible", "visible"],
  ["GET /api/v2/conversations/{id}", "visible", "visible"],
  ["PATCH /api/v2/conversations/{id}", "visible", "visible"],
  ["GET /api/v2/conversations/{id}/messages", "visible", "visible"],
  ["POST /api/v2/conversations/{id}/read", "visible", "visible"],
  ["POST /api/v2/conversations/{id}/typing", "visible", "visible"],
  ["POST /api/v2/messages", "visible", "visible"],
  ["GET /api/v2/messages/{id}", "visible", "visible"],
  ["POST /api/v2/messages/{waMessageId}/read", "visible", "visible"],
  ["GET /api/v2/contacts/{id}", "visible", "visible"],
  ["GET /api/v2/contacts/{id}/conversations", "visible", "visible"],
  ["GET /api/v2/media/{id}", "visible", "visible"],
  ["GET /api/v2/media/by-key", "visible", "visible"],
  ["GET /api/v2/contacts", "no", "no"],
  ["POST /api/v2/contacts", "no", "no"],
  ["PATCH /api/v2/contacts/{id}", "no", "no"],
  ["POST /api/v2/messages/batch", "no", "no"],
  ["GET /api/v2/webhooks", "no", "no"],
  ["POST /api/v2/webhooks", "no", "no"],
  ["GET /api/v2/webhooks/{id}", "no", "no"],
  ["PATCH /api/v2/webhooks/{id}", "no", "no"],
  ["DELETE /api/v2/webhooks/{id}", "no", "no"],
  ["POST /api/v2/webhooks/{id}/test", "no", "no"],
  ["GET /api/v2/webhooks/{id}/deliveries", "no", "no"],
  ["POST /api/v2/webhooks/{id}/rotate-secret", "no", "no"],
  ["POST /api/v2/webhooks/{id}/replay/{deliveryId}", "no", "no"],
  ["GET /api/v2/events", "no", "no"],
  ["GET /api/v2/social/posts", "no", "no"],
  ["GET /api/v2/social/posts/{id}", "no", "no"],
  ["GET /api/v2/social/posts/{id}/comments", "no", "no"],
  ["GET /api/v2/social/account/summary", "no", "no"],
  ["GET /api/v1/conversations/resolve", "visible", "visible"],
  ["GET /api/v1/conversations", "visible", "visible"],
  ["GET /api/v1/conversations/{id}/messages", "visible", "visible"],
  ["GET /api/v1/agents", "yes", "yes"],
  ["POST /api/v1/media", "yes", "yes"],
  ["GET /api/v1/webhook-subscriptions", "no", "no"],
  ["POST /api/v1/webhook-subscriptions", "no", "no"],
  ["GET /api/v1/webhook-subscriptions/{id}", "no", "no"],
  ["PATCH /api/v1/webhook-subscriptions/{id}", "no", "no"],
];

/** The /api/v1 panel routes (plain Hono, outside the document): their requests. */
const PANEL_ROUTES: Record<string, (fx: Fixture) => ApiRequest> = {
  "GET /api/v1/conversations/resolve": (fx) => ({
    method: "GET",
    url: `/api/v1/conversations/resolve?phone=${
      encodeURIComponent(fx.contactPhone)
    }`,
  }),
  "GET /api/v1/conversations": () => ({
    method: "GET",
    url: "/api/v1/conversations?limit=100",
  }),
  "GET /api/v1/conversations/{id}/messages": (fx) => ({
    method: "GET",
    url: `/api/v1/conversations/${fx.conversationId}/messages`,
  }),
  "GET /api/v1/agents": () => ({ method: "GET", url: "/api/v1/agents" }),
  "POST /api/v1/media": (fx) => ({
    method: "POST",
    url: `/api/v1/media?phoneNumberId=${fx.tenant.channel.id}&filename=a.txt`,
    raw: { body: "a document", headers: { "content-type": "text/plain" } },
  }),
  "GET /api/v1/webhook-subscriptions": () => ({
    method: "GET",
    url: "/api/v1/webhook-subscriptions",
  }),
  "POST /api/v1/webhook-subscriptions": () => ({
    method: "POST",
    url: "/api/v1/webhook-subscriptions",
    body: { url: "http://127.0.0.1:9/v1", events: ["contact.created"] },
  }),
  "GET /api/v1/webhook-subscriptions/{id}": (fx) => ({
    method: "GET",
    url: `/api/v1/webhook-subscriptions/${fx.webhookId}`,
  }),
  "PATCH /api/v1/webhook-subscriptions/{id}": (fx) => ({
    method: "PATCH",
    url: `/api/v1/webhook-subscriptions/${fx.webhookId}`,
    body: { description: "renamed" },
  }),
};

/** Lists answer 200 without the rows an agent cannot see, instead of 404. */
const LISTS = new Set([
  "GET /api/v2/conversations",
  "GET /api/v2/conversations/resolve",
  "GET /api/v1/conversations/resolve",
  "GET /api/v1/conversations",
]);

/** The request of a route of the table, against the fixture's rows. */
function requestOf(
  label: string,
  ops: Map<string, ReturnType<typeof apiOperations>[number]>,
  fx: Fixture,
): ApiRequest {
  const panel = PANEL_ROUTES[label];
  if (panel) return panel(fx);
  const op = ops.get(label.replace("/api/v2", ""));
  assert.ok(op, `${label} is not in the OpenAPI document`);
  const req = buildRequest(op, fx, { strict: true });
  // An agent answers its conversations: a send goes to the fixture's contact.
  if (label === "POST /api/v2/messages") {
    req.body = templateSend(fx, fx.contactPhone);
  }
  return req;
}

async function agents(h: Harness) {
  const accountId = h.tenant.account.id;
  const all = await createAgent(h.container, {
    accountId,
    name: "All",
    visibility: "all",
  });
  const assigned = await createAgent(h.container, {
    accountId,
    name: "Assigned",
    visibility: "assigned",
  });
  return { all, assigned };
}

function assertAllowed(label: string, res: { status: number; body: unknown }) {
  const where = `${label} -> ${res.status} ${JSON.stringify(res.body)}`;
  assert.ok(res.status >= 200 && res.status < 300, where);
}

routeTest(
  "the agent access table covers every route, and docs/panel.md shows it",
  async (h) => {
    const labels = new Set(AGENT_ACCESS.map(([label]) => label));
    assert.equal(labels.size, AGENT_ACCESS.length, "one row per route");
    const documented = apiOperations(await loadDocument(h)).map((op) =>
      `${op.method} /api/v2${op.path}`
    );
    const expected = [...documented, ...Object.keys(PANEL_ROUTES)];
    assert.deepEqual(
      [...labels].sort(),
      expected.sort(),
      "AGENT_ACCESS lists exactly the document's operations and the /api/v1 routes",
    );
    const readme = await Deno.readTextFile(
      new URL("../../docs/panel.md", import.meta.url),
    );
    const start = readme.indexOf("<!-- agent-access:start -->");
    const end = readme.indexOf("<!-- agent-access:end -->");
    assert.ok(
      start >= 0 && end > start,
      "docs/panel.md has the agent access table",
    );
    const WORDS: Record<Access, string> = {
      yes: "yes",
      visible: "what it sees",
      no: "no (403)",
    };
    const rows = readme.slice(start, end).split("\n")
      .filter((line) => line.startsWith("| `"))
      .map((line) => line.split("|").slice(1, -1).map((c) => c.trim()));
    assert.deepEqual(
      rows.map((r) => [r[0]!.replaceAll("`", ""), r[1], r[2]]),
      AGENT_ACCESS.map(([label, all, assigned]) => [
        label,
        WORDS[all],
        WORDS[assigned],
      ]),
    );
  },
  { engines: ["sqlite"] },
);

routeTest(
  "agents may do exactly what the table says, on what they see",
  async (h, t) => {
    const fx = await seedTenant(h, h.tenant, { label: "a" });
    const ops = new Map(
      apiOperations(await loadDocument(h)).map((op) => [op.label, op]),
    );
    const { all, assigned } = await agents(h);
    const run = (label: string, token: string) =>
      send(h, requestOf(label, ops, fx), token);
    for (const [label, forAll, forAssigned] of AGENT_ACCESS) {
      await t.step(label, async () => {
        const byAll = await run(label, all.token);
        if (forAll === "no") {
          assertErrorBody(byAll, 403, "INSUFFICIENT_SCOPE", label);
        } else assertAllowed(label, byAll);
        // The fixture's conversation is not assigned to anyone.
        const hidden = await run(label, assigned.token);
        if (forAssigned === "no") {
          assertErrorBody(hidden, 403, "INSUFFICIENT_SCOPE", label);
        } else if (forAssigned === "yes") assertAllowed(label, hidden);
        else if (LISTS.has(label)) {
          assertAllowed(label, hidden);
          assert.ok(
            !stringsIn(hidden.body).has(fx.conversationId),
            `${label} shows a conversation the agent cannot see`,
          );
        } else {
          assert.equal(
            hidden.status,
            404,
            `${label} ${JSON.stringify(hidden.body)}`,
          );
        }
      });
    }
    // Assigned to the `assigned` agent, the same requests go through.
    await h.container.db.updateTable("conversations")
      .set({ assigned_to: assigned.agent.id })
      .where("id", "=", fx.conversationId).execute();
    for (const [label, , forAssigned] of AGENT_ACCESS) {
      if (forAssigned !== "visible") continue;
      await t.step(`${label} (assigned to it)`, async () => {
        const res = await run(label, assigned.token);
        assertAllowed(label, res);
        if (LISTS.has(label)) {
          assert.ok(stringsIn(res.body).has(fx.conversationId), label);
        }
      });
    }
  },
);

routeTest(
  "an agent's message carries origin panel and its id; it never starts a conversation",
  async (h) => {
    const fx = await seedTenant(h, h.tenant, { label: "b" });
    const { all, assigned } = await agents(h);
    const sent = await h.request("POST", "/api/v2/messages", {
      key: all.token,
      body: {
        phoneNumberId: fx.tenant.channel.id,
        to: fx.contactPhone,
        type: "text",
        text: { body: "Hola, soy Ana" },
      },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const shown = await h.request(
      "GET",
      `/api/v2/messages/${sent.body.data.id}`,
    );
    assert.equal(shown.body.data.origin, "panel");
    assert.equal(shown.body.data.agentId, all.agent.id);
    // A new number, another account's channel: 404 whatever the agent.
    for (
      const body of [
        templateSend(fx, "+5491155999999"),
        {
          ...templateSend(fx, fx.contactPhone),
          phoneNumberId: crypto.randomUUID(),
        },
      ]
    ) {
      const res = await h.request("POST", "/api/v2/messages", {
        key: all.token,
        body,
      });
      assertErrorBody(res, 404, "CONVERSATION_NOT_FOUND");
    }
    // Interactive messages, metadata and media by upstream id are for API keys.
    for (
      const extra of [
        {
          type: "interactive",
          interactive: {
            type: "button",
            body: { text: "Hi" },
            action: {
              buttons: [{ type: "reply", reply: { id: "a", title: "A" } }],
            },
          },
        },
        { type: "text", text: { body: "x" }, metadata: { origin: "crm" } },
        { type: "image", image: { id: "123" } },
      ]
    ) {
      const res = await h.request("POST", "/api/v2/messages", {
        key: all.token,
        body: {
          phoneNumberId: fx.tenant.channel.id,
          to: fx.contactPhone,
          ...extra,
        },
      });
      assertErrorBody(res, 403, "INSUFFICIENT_SCOPE", JSON.stringify(extra));
    }
    // An `assigned` agent assigns only to itself; an `all` agent to anyone.
    await h.container.db.updateTable("conversations")
      .set({ assigned_to: assigned.agent.id })
      .where("id", "=", fx.conversationId).execute();
    const toOther = await h.request(
      "PATCH",
      `/api/v2/conversations/${fx.conversationId}`,
      { key: assigned.token, body: { assignedTo: all.agent.id } },
    );
    assertErrorBody(toOther, 403, "INSUFFICIENT_SCOPE");
    const toSelf = await h.request(
      "PATCH",
      `/api/v2/conversations/${fx.conversationId}`,
      { key: assigned.token, body: { assignedTo: assigned.agent.id } },
    );
    assert.equal(toSelf.status, 200);
    const byAll = await h.request(
      "PATCH",
      `/api/v2/conversations/${fx.conversationId}`,
      { key: all.token, body: { assignedTo: all.agent.id } },
    );
    assert.equal(byAll.status, 200);
    assert.equal(byAll.body.data.assignedTo, all.agent.id);
  },
  { engines: ["sqlite"] },
);

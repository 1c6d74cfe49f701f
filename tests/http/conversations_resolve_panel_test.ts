// GET /api/v1/conversations/resolve, the panel-side variant: every answer is
// the /api/v2 answer without `meta`, for keys and agent tokens alike.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import { insertThread } from "./_conversation_fixtures.ts";
import { assertErrorBody } from "./_routes.ts";

/** The same query on both paths; the v1 answer must be v2's data without `meta`. */
async function resolveBoth(
  h: Harness,
  query: Record<string, string>,
  key?: string | null,
) {
  const qs = new URLSearchParams(query);
  const options = key === undefined ? {} : { key };
  const v2 = await h.request(
    "GET",
    `/api/v2/conversations/resolve?${qs}`,
    options,
  );
  const v1 = await h.request(
    "GET",
    `/api/v1/conversations/resolve?${qs}`,
    options,
  );
  const label = `${JSON.stringify(query)} v1=${JSON.stringify(v1.body)}`;
  assert.equal(v1.status, v2.status, label);
  if (v1.status === 200) {
    assert.deepEqual(Object.keys(v1.body), ["data"], label);
    assert.deepEqual(v1.body.data, v2.body.data, label);
  } else {
    assert.equal(v1.body.error.code, v2.body.error.code, label);
    assert.equal(v1.body.error.message, v2.body.error.message, label);
  }
  return v1;
}

engineTest(
  "GET /api/v1/conversations/resolve answers like /api/v2 without meta",
  async (h) => {
    const ana = await insertThread(h, {
      phoneNumber: "+5491122334455",
      email: "Ana@Example.com",
      customFields: { instagram: "@Ana.Shop" },
    });
    const bob = await insertThread(h, { phoneNumber: "+5491199998888" });
    const cases: [Record<string, string>, string | null, string[]][] = [
      [{ phone: "011 15 2233-4455" }, ana.conversationId, []],
      [{ email: "ana@example.COM" }, ana.conversationId, []],
      [{ instagram: "ana.shop" }, ana.conversationId, []],
      [
        { phone: "+5491199998888", email: "ana@example.com" },
        bob.conversationId,
        [ana.conversationId],
      ],
      [
        { phone: "+5491199998888", channel: h.tenant.channel.id },
        bob.conversationId,
        [],
      ],
      [{ email: "nobody@example.com" }, null, []],
    ];
    for (const [query, conversationId, alternatives] of cases) {
      const res = await resolveBoth(h, query);
      assert.equal(res.status, 200, JSON.stringify(query));
      assert.deepEqual(
        res.body.data,
        { conversationId, alternatives },
        JSON.stringify(query),
      );
    }
  },
);

engineTest(
  "GET /api/v1/conversations/resolve takes agent tokens with their visibility",
  async (h) => {
    const { token, agent } = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Agent",
      visibility: "assigned",
    });
    // Two contacts share the e-mail; only one conversation is the agent's.
    const mine = (await insertThread(h, {
      phoneNumber: "+5491122334455",
      email: "ana@example.com",
      assigned_to: agent.id,
      last_message_at: "2026-11-20T09:00:00.000Z",
    })).conversationId;
    const notMine = (await insertThread(h, {
      phoneNumber: "+5491122334466",
      email: "ana@example.com",
      last_message_at: "2026-11-20T10:00:00.000Z",
    })).conversationId;
    const asAgent = await resolveBoth(h, { email: "ana@example.com" }, token);
    assert.deepEqual(asAgent.body.data, {
      conversationId: mine,
      alternatives: [],
    });
    const asKey = await resolveBoth(h, { email: "ana@example.com" });
    assert.deepEqual(asKey.body.data, {
      conversationId: notMine,
      alternatives: [mine],
    });
  },
);

engineTest(
  "GET /api/v1/conversations/resolve keeps v2's errors, scope and account",
  async (h) => {
    const invalid: Record<string, string>[] = [
      {},
      { email: "a@b.c", channel: "line-1" },
      { email: "a@b.c", name: "Ana" },
    ];
    for (const query of invalid) {
      const res = await resolveBoth(h, query);
      assert.equal(res.status, 400, JSON.stringify(query));
      assert.equal(res.body.error.code, "VALIDATION_ERROR");
      assert.equal(res.body.meta.requestId, res.headers.get("x-request-id"));
    }
    // Whatever the service makes of an unreadable number, both paths agree.
    await resolveBoth(h, { phone: "abc" });
    const ana = await insertThread(h, { phoneNumber: "+5491122334455" });
    const query = new URLSearchParams({ phone: "+5491122334455" });
    const path = `/api/v1/conversations/resolve?${query}`;
    const noScope = await h.makeKey(h.tenant.account.id, ["contacts:read"]);
    assertErrorBody(
      await h.request("GET", path, { key: noScope }),
      403,
      "INSUFFICIENT_SCOPE",
    );
    assertErrorBody(
      await h.request("GET", path, { key: null }),
      401,
      "UNAUTHORIZED",
    );
    const other = await h.makeTenant(
      `other-${crypto.randomUUID().slice(0, 6)}`,
    );
    const foreign = await resolveBoth(
      h,
      { phone: "+5491122334455" },
      other.key,
    );
    assert.deepEqual(foreign.body.data, {
      conversationId: null,
      alternatives: [],
    });
    const own = await h.request("GET", path);
    assert.equal(own.body.data.conversationId, ana.conversationId);
  },
);

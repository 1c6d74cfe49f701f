import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { createAgent } from "../../src/domain/accounts/account_service.ts";
import { insertThread } from "./_conversation_fixtures.ts";
import { assertErrorBody } from "./_routes.ts";

const API = "/api/v2";

engineTest(
  "PATCH /conversations/:id refuses an assignee that is not an agent of the account with 422",
  async (h) => {
    const { conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
    });
    const other = await h.makeTenant(
      `assign-${crypto.randomUUID().slice(0, 6)}`,
    );
    const foreign = await createAgent(h.container, {
      accountId: other.account.id,
      name: "Someone else's agent",
      visibility: "all",
    });
    const revoked = await createAgent(h.container, {
      accountId: h.tenant.account.id,
      name: "Former agent",
      visibility: "all",
    });
    await h.container.db.updateTable("agents")
      .set({ revoked_at: "2026-11-01T00:00:00.000Z" })
      .where("id", "=", revoked.agent.id).execute();
    const path = `${API}/conversations/${conversationId}`;
    const before = await h.request("GET", path);
    for (
      const [what, agentId] of [
        ["no such agent", crypto.randomUUID()],
        ["another account's agent", foreign.agent.id],
        ["a revoked agent", revoked.agent.id],
      ]
    ) {
      const res = await h.request("PATCH", path, {
        body: { status: "pending", assignedTo: agentId },
      });
      assertErrorBody(res, 422, "INVALID_AGENT", what);
      assert.match(res.body.error.message, new RegExp(`"${agentId}"`), what);
    }
    const after = await h.request("GET", path);
    assert.deepEqual(after.body.data, before.body.data, "nothing changed");
    assert.equal(after.body.data.status, "open");
  },
);

// PATCH /conversations/:id as an atomic unit (issue 30, item 1): on libSQL
// no interactive transaction, and a change made meanwhile is not undone.
import assert from "node:assert/strict";
// First: the app's schemas extend zod before any domain schema is built.
import { engineTest, type Harness } from "../../_harness.ts";
import { createAgent } from "../../../src/domain/accounts/account_service.ts";
import { updateConversation } from "../../../src/domain/conversations/conversation_service.ts";
import { insertThread } from "../../http/_conversation_fixtures.ts";
import {
  beforeNextBatch,
  forbidTransactions,
  racingInstance,
} from "../../_support/instances.ts";

async function updatedEvents(h: Harness) {
  const rows = await h.container.db.selectFrom("events").select("data")
    .where("type", "=", "conversation.updated").orderBy("seq").execute();
  return rows.map((r) => JSON.parse(r.data));
}

async function agentOf(h: Harness): Promise<string> {
  const { agent } = await createAgent(h.container, {
    accountId: h.tenant.account.id,
    name: "Agent",
    visibility: "all",
  });
  return agent.id;
}

engineTest(
  "PATCH /conversations/:id runs without an interactive transaction on libSQL and records conversation.updated",
  async (h) => {
    const { conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
    });
    const agentId = await agentOf(h);
    forbidTransactions(h.container);
    const path = `/api/v2/conversations/${conversationId}`;
    const res = await h.request("PATCH", path, {
      body: { status: "resolved", assignedTo: agentId },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.data.status, "resolved");
    assert.equal(res.body.data.assignedTo, agentId);
    // What PATCH answered is what is stored.
    assert.deepEqual((await h.request("GET", path)).body.data, res.body.data);
    // Nothing changes: no event.
    const same = await h.request("PATCH", path, {
      body: { status: "resolved" },
    });
    assert.equal(same.status, 200);
    const events = await updatedEvents(h);
    assert.equal(events.length, 1);
    assert.equal(events[0].previousStatus, "open");
    assert.equal(events[0].previousAssignedTo, null);
    assert.equal(events[0].assignedTo, agentId);
  },
);

engineTest(
  "a status change and an assignment made at once through two instances both land, each event with the values before it",
  async (h) => {
    const { conversationId: id } = await insertThread(h, {
      phoneNumber: "+5491122334455",
    });
    const agentId = await agentOf(h);
    await using other = racingInstance(h);
    const viewer = { accountId: h.tenant.account.id };
    const resolve = () =>
      updateConversation(h.container, { viewer, id, status: "resolved" });
    const assign = () =>
      updateConversation(other, { viewer, id, assignedTo: agentId });
    if (h.engine === "libsql") {
      // Ours read it open and unassigned; theirs assigns it before our batch.
      const seen = beforeNextBatch(h, assign);
      const ours = await resolve();
      // Refused once, then planned on the assigned conversation.
      assert.equal(seen.batches, 2);
      assert.equal(ours.assignedTo, agentId);
    } else {
      await Promise.all([resolve(), assign()]);
    }
    const row = await h.container.db.selectFrom("conversations")
      .select(["status", "assigned_to"]).executeTakeFirstOrThrow();
    assert.deepEqual({ ...row }, { status: "resolved", assigned_to: agentId });
    const events = await updatedEvents(h);
    assert.equal(events.length, 2);
    // The second event's previous values are the first's new ones.
    assert.equal(events[1].previousStatus, events[0].status);
    assert.equal(events[1].previousAssignedTo, events[0].assignedTo);
    assert.equal(events[1].status, "resolved");
    assert.equal(events[1].assignedTo, agentId);
  },
);

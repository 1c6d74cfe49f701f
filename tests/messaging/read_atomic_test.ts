// Marking a conversation read as an atomic unit: on libSQL one write batch
// (no interactive transaction), guarded on the unread count it read.
import assert from "node:assert/strict";
import { engineTest } from "../_harness.ts";
import { seedTemplate, templateTo } from "./_helpers.ts";
import { markConversationRead } from "../../src/domain/messages/read_service.ts";

engineTest(
  "two marks of one unread conversation at once reset it once, with one conversation.read",
  async (h) => {
    if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
    await seedTemplate(h);
    const sent = await h.request("POST", "/api/v2/messages", {
      body: {
        phoneNumberId: h.tenant.channel.id,
        ...templateTo("+5491155550700"),
      },
    });
    assert.equal(sent.status, 201, JSON.stringify(sent.body));
    const id = sent.body.data.conversationId;
    await h.container.db.updateTable("conversations")
      .set({ unread_count: 2 }).where("id", "=", id).execute();
    const viewer = { accountId: h.tenant.account.id };
    // One turn: on libSQL both read 2 and go in one batch, where the second
    // reset finds nothing to reset: its guard fails, and planned again it
    // reads 0 and writes nothing.
    const results = await Promise.all([
      markConversationRead(h.container, viewer, id),
      markConversationRead(h.container, viewer, id),
    ]);
    assert.deepEqual(results.map((r) => r.conversationId), [id, id]);
    const row = await h.container.db.selectFrom("conversations")
      .select("unread_count").where("id", "=", id).executeTakeFirstOrThrow();
    assert.equal(row.unread_count, 0);
    const reads = await h.container.db.selectFrom("events").select("data")
      .where("type", "=", "conversation.read").execute();
    assert.equal(reads.length, 1, "one reset, one event");
    // Read again: nothing to reset, no event.
    await markConversationRead(h.container, viewer, id);
    const again = await h.container.db.selectFrom("events").select("id")
      .where("type", "=", "conversation.read").execute();
    assert.equal(again.length, 1);
  },
);

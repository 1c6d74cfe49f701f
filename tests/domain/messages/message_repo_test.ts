import assert from "node:assert/strict";
import { createHarness, engineTest } from "../../_harness.ts";
import { planProbe } from "../../_support/plans.ts";
import { insertThread } from "../../http/_conversation_fixtures.ts";
import type { Message } from "../../../src/domain/messages/message.ts";
import {
  findAccountMessage,
  findMessageById,
  insertMessage,
  latestInboundWithWamid,
  toMessage,
  toMessageRow,
  transitionStatus,
} from "../../../src/domain/messages/message_repo.ts";

function message(overrides: Partial<Message> = {}): Message {
  return {
    id: crypto.randomUUID(),
    accountId: crypto.randomUUID(),
    conversationId: crypto.randomUUID(),
    contactId: crypto.randomUUID(),
    channelId: crypto.randomUUID(),
    direction: "outbound",
    type: "text",
    content: { body: "Hola" },
    status: "queued",
    waMessageId: "wamid.1",
    errorCode: "131047",
    errorMessage: "Re-engagement message",
    origin: "external_api",
    sentByAi: true,
    campaignId: "camp_1",
    clientRef: "order-1",
    mediaId: "med_1",
    mediaKey: "media/a/b",
    lane: "batch",
    contextWaMessageId: "wamid.quoted",
    upstreamAt: "2026-11-20T11:59:00.000Z",
    details: { forwarded: true, contextMessageId: "msg_quoted" },
    agentId: "agent_1",
    createdAt: "2026-11-20T12:00:00.000Z",
    updatedAt: "2026-11-20T12:00:01.000Z",
    ...overrides,
  };
}

Deno.test("toMessage() reads back every field toMessageRow() writes", () => {
  const full = message();
  const row = toMessageRow(full);
  assert.equal(row.sent_by_ai, 1);
  assert.equal(row.content, '{"body":"Hola"}');
  assert.deepEqual(toMessage(row), full);
  const bare = message({ details: {}, sentByAi: false, channelId: null });
  assert.equal(toMessageRow(bare).details, null);
  assert.deepEqual(toMessage(toMessageRow(bare)), bare);
});

Deno.test("toMessage() reads content that is not JSON as empty", () => {
  const row = { ...toMessageRow(message()), content: "not json" };
  assert.deepEqual(toMessage(row).content, {});
});

engineTest(
  "insertMessage() stores a message that findAccountMessage() returns unchanged",
  async (h) => {
    const thread = await insertThread(h, { phoneNumber: "+5491122334455" });
    const stored = message({
      accountId: h.tenant.account.id,
      channelId: h.tenant.channel.id,
      ...thread,
      content: [{ name: { formatted_name: "Ana" } }],
      type: "contacts",
    });
    await insertMessage(h.container.db, stored);
    assert.deepEqual(
      await findAccountMessage(h.container.db, stored.accountId, stored.id),
      stored,
    );
    const row = await findMessageById(h.container.db, stored.id);
    assert.deepEqual({ ...row }, toMessageRow(stored));
  },
);

engineTest(
  "transitionStatus() moves only from the status given, writes the error columns it is given and a missing wamid",
  async (h) => {
    const db = h.container.db;
    const thread = await insertThread(h, { phoneNumber: "+5491122334466" });
    const stored = message({
      accountId: h.tenant.account.id,
      channelId: h.tenant.channel.id,
      ...thread,
      waMessageId: null,
      errorCode: null,
      errorMessage: null,
    });
    await insertMessage(db, stored);
    const read = async () => {
      const r = (await findMessageById(db, stored.id))!;
      return [
        r.status,
        r.updated_at,
        r.wa_message_id,
        r.error_code,
        r.error_message,
      ];
    };
    const at = (s: number) => `2026-11-20T12:00:0${s}.000Z`;
    // Each step: the change, whether it moved, the columns read after it.
    const steps: [
      Parameters<typeof transitionStatus>[2],
      boolean,
      unknown[],
    ][] = [
      [
        { from: "queued", to: "sent", now: at(2), waMessageId: "wamid.A" },
        true,
        ["sent", at(2), "wamid.A", null, null],
      ],
      // Another report's `from`: nothing moves, the wamid already set stays.
      [
        { from: "queued", to: "read", now: at(3), waMessageId: "wamid.B" },
        false,
        ["sent", at(2), "wamid.A", null, null],
      ],
      [
        {
          from: "sent",
          to: "failed",
          now: at(4),
          errorCode: "131026",
          errorMessage: "Undeliverable",
        },
        true,
        ["failed", at(4), "wamid.A", "131026", "Undeliverable"],
      ],
      [
        { from: "failed", to: "failed", now: at(5), errorMessage: "Retried" },
        true,
        ["failed", at(5), "wamid.A", "131026", "Retried"],
      ],
      [
        { from: "failed", to: "failed", now: at(6), errorCode: null },
        true,
        ["failed", at(6), "wamid.A", null, "Retried"],
      ],
    ];
    for (const [change, moved, after] of steps) {
      assert.equal(await transitionStatus(db, stored.id, change), moved);
      assert.deepEqual(await read(), after, JSON.stringify(change));
    }
  },
);

// Migration 0011 dropped messages_inbound_idx as unread: the one query
// filtering a conversation's messages by direction is served by
// messages_conversation_idx in the order it asks for, without a sort.
Deno.test("latestInboundWithWamid reads messages_conversation_idx without a sort", async () => {
  await using h = await createHarness();
  await using probe = planProbe(`${h.dir}/app.db`);
  for (const since of [undefined, "2026-11-20T12:00:00.000Z"]) {
    const plan = await probe.planOf((db) =>
      latestInboundWithWamid(db, crypto.randomUUID(), since)
    );
    assert.match(
      plan,
      /SEARCH messages USING INDEX messages_conversation_idx \(conversation_id=\?/,
    );
    assert.doesNotMatch(plan, /TEMP B-TREE/, plan);
  }
});

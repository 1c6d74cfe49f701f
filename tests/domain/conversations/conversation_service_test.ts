import assert from "node:assert/strict";
import { engineTest, type Harness } from "../../_harness.ts";
import {
  findOrCreateConversation,
  getConversation,
  recordInbound,
  recordOutbound,
  resetUnread,
  updateLastMessageStatus,
} from "../../../src/domain/conversations/conversation_service.ts";
import {
  insertContact,
  insertThread,
} from "../../http/_conversation_fixtures.ts";

const read = (h: Harness, id: string) =>
  getConversation(h.container, {
    viewer: { accountId: h.tenant.account.id },
    id,
  });

const events = (h: Harness) =>
  h.container.db.selectFrom("events").selectAll()
    .where("account_id", "=", h.tenant.account.id).orderBy("seq").execute();

engineTest(
  "findOrCreateConversation creates an open conversation and its event once",
  async (h) => {
    const contactId = await insertContact(h, {
      phoneNumber: "+5491122334455",
      name: "Ana",
    });
    const input = {
      accountId: h.tenant.account.id,
      contactId,
      channelId: h.tenant.channel.id,
      now: new Date("2026-11-20T12:30:00.000Z"),
    };
    const first = await h.container.db.transaction().execute((trx) =>
      findOrCreateConversation(trx, input)
    );
    assert.equal(first.created, true);
    assert.deepEqual(first.conversation, {
      id: first.conversation.id,
      contactId,
      phoneNumberId: h.tenant.channel.id,
      status: "open",
      assignedTo: null,
      lastMessageAt: null,
      lastMessagePreview: null,
      lastMessageDirection: null,
      lastMessageStatus: null,
      serviceWindowExpiresAt: null,
      unreadCount: 0,
      createdAt: "2026-11-20T12:30:00.000Z",
      contact: {
        id: contactId,
        phoneNumber: "+5491122334455",
        userId: null,
        username: null,
        name: "Ana",
      },
      referral: null,
    });
    const again = await findOrCreateConversation(h.container.db, input);
    assert.equal(again.created, false);
    assert.equal(again.conversation.id, first.conversation.id);

    const rows = await events(h);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.type, "conversation.created");
    assert.equal(rows[0]!.created_at, "2026-11-20T12:30:00.000Z");
    assert.deepEqual(JSON.parse(rows[0]!.data), first.conversation);
  },
  { allowTransactions: true },
);

engineTest(
  "findOrCreateConversation finds a conversation without channel",
  async (h) => {
    const contactId = await insertContact(h, { phoneNumber: "+5491122334455" });
    const input = {
      accountId: h.tenant.account.id,
      contactId,
      channelId: null,
      now: h.clock.now(),
    };
    const first = await findOrCreateConversation(h.container.db, input);
    const second = await findOrCreateConversation(h.container.db, input);
    assert.equal(first.created, true);
    assert.equal(second.created, false);
    assert.equal(second.conversation.id, first.conversation.id);
    assert.equal(first.conversation.phoneNumberId, null);
    const onChannel = await findOrCreateConversation(h.container.db, {
      ...input,
      channelId: h.tenant.channel.id,
    });
    assert.equal(onChannel.created, true);
    assert.equal((await events(h)).length, 2);
  },
);

engineTest(
  "findOrCreateConversation writes nothing when the transaction rolls back",
  async (h) => {
    const contactId = await insertContact(h, { phoneNumber: "+5491122334455" });
    await assert.rejects(
      h.container.db.transaction().execute(async (trx) => {
        await findOrCreateConversation(trx, {
          accountId: h.tenant.account.id,
          contactId,
          channelId: h.tenant.channel.id,
          now: h.clock.now(),
        });
        throw new Error("roll back");
      }),
      /roll back/,
    );
    const count = await h.container.db.selectFrom("conversations")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 0);
    assert.equal((await events(h)).length, 0);
  },
  { allowTransactions: true },
);

engineTest(
  "recordInbound updates the last message, window and unread count and reopens",
  async (h) => {
    const { conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
      status: "resolved",
      unread_count: 2,
    });
    const at = new Date("2026-11-20T13:00:00.000Z");
    const messageId = crypto.randomUUID();
    assert.equal(
      await recordInbound(h.container.db, {
        conversationId,
        messageId,
        preview: "Hola",
        at,
      }),
      true,
    );
    const c = await read(h, conversationId);
    assert.equal(c.status, "open");
    assert.equal(c.unreadCount, 3);
    assert.equal(c.lastMessageAt, "2026-11-20T13:00:00.000Z");
    assert.equal(c.lastMessagePreview, "Hola");
    assert.equal(c.lastMessageDirection, "inbound");
    assert.equal(c.lastMessageStatus, "delivered");
    assert.equal(c.serviceWindowExpiresAt, "2026-11-21T13:00:00.000Z");
    const row = await h.container.db.selectFrom("conversations").selectAll()
      .where("id", "=", conversationId).executeTakeFirstOrThrow();
    assert.equal(row.last_message_id, messageId);
    assert.equal(row.last_inbound_at, "2026-11-20T13:00:00.000Z");

    // A late message from earlier counts as unread but changes nothing else.
    await recordInbound(h.container.db, {
      conversationId,
      messageId: crypto.randomUUID(),
      preview: "older",
      at: new Date("2026-11-20T12:00:00.000Z"),
      windowHours: 24,
    });
    const late = await read(h, conversationId);
    assert.equal(late.unreadCount, 4);
    assert.equal(late.lastMessagePreview, "Hola");
    assert.equal(late.serviceWindowExpiresAt, "2026-11-21T13:00:00.000Z");

    assert.equal(
      await recordInbound(h.container.db, {
        conversationId: crypto.randomUUID(),
        messageId,
        preview: "x",
        at,
      }),
      false,
    );
  },
);

engineTest(
  "recordInbound keeps a pending conversation pending and truncates long previews",
  async (h) => {
    const { conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
      status: "pending",
    });
    await recordInbound(h.container.db, {
      conversationId,
      messageId: crypto.randomUUID(),
      preview: "x".repeat(500),
      at: h.clock.now(),
    });
    const c = await read(h, conversationId);
    assert.equal(c.status, "pending");
    assert.equal([...c.lastMessagePreview!].length, 200);
  },
);

engineTest(
  "recordOutbound and updateLastMessageStatus track the last message's status",
  async (h) => {
    const { conversationId } = await insertThread(h, {
      phoneNumber: "+5491122334455",
    });
    const db = h.container.db;
    await recordInbound(db, {
      conversationId,
      messageId: crypto.randomUUID(),
      preview: "Hola",
      at: new Date("2026-11-20T13:00:00.000Z"),
    });
    const first = crypto.randomUUID();
    await recordOutbound(db, {
      conversationId,
      messageId: first,
      preview: "¡Hola!",
      status: "queued",
      at: new Date("2026-11-20T13:01:00.000Z"),
    });
    let c = await read(h, conversationId);
    assert.equal(c.lastMessageDirection, "outbound");
    assert.equal(c.lastMessageStatus, "queued");
    assert.equal(c.lastMessagePreview, "¡Hola!");
    assert.equal(c.unreadCount, 1);
    assert.equal(c.serviceWindowExpiresAt, "2026-11-21T13:00:00.000Z");

    assert.equal(
      await updateLastMessageStatus(db, {
        conversationId,
        messageId: first,
        status: "sent",
      }),
      true,
    );
    assert.equal((await read(h, conversationId)).lastMessageStatus, "sent");

    const second = crypto.randomUUID();
    await recordOutbound(db, {
      conversationId,
      messageId: second,
      preview: "¿Algo más?",
      status: "queued",
      at: new Date("2026-11-20T13:02:00.000Z"),
    });
    // A report about an earlier message leaves the last one alone.
    assert.equal(
      await updateLastMessageStatus(db, {
        conversationId,
        messageId: first,
        status: "read",
      }),
      false,
    );
    c = await read(h, conversationId);
    assert.equal(c.lastMessageStatus, "queued");
    assert.equal(c.lastMessagePreview, "¿Algo más?");

    assert.equal(await resetUnread(db, conversationId), true);
    assert.equal((await read(h, conversationId)).unreadCount, 0);
  },
);

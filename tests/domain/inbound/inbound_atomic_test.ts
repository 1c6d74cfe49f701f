// Meta's inbound messages and statuses as atomic units (issue 30, item 1):
// on libSQL no interactive transaction (reads, then one batch), and the
// races a transaction used to settle settled by guards instead.
import assert from "node:assert/strict";
// First: the app's schemas extend zod before any domain schema is built.
import { engineTest, type Harness } from "../../_harness.ts";
import {
  acceptMetaWebhook,
  processInboundPayload,
} from "../../../src/domain/inbound/inbound_service.ts";
import {
  applyEchoMessage,
  applyInboundMessage,
  applyStatus,
} from "../../../src/domain/inbound/inbound_apply_service.ts";
import type { MetaMessage } from "../../../src/domain/inbound/meta_payload.ts";
import type { Sender } from "../../../src/domain/inbound/sender.ts";
import { metaChange } from "../../messaging/_helpers.ts";
import type { Container } from "../../../src/container.ts";
import {
  beforeNextBatch,
  forbidTransactions,
  racingInstance,
} from "../../_support/instances.ts";

const PHONE = "+5491155550301";
const SENDER: Sender = {
  phoneNumber: PHONE,
  userId: null,
  parentUserId: null,
  username: null,
  name: "Ana",
};

function unix(h: Harness): string {
  return String(Math.floor(h.clock.now().getTime() / 1000));
}

function text(h: Harness, id: string, body: string): MetaMessage {
  return {
    from: PHONE.slice(1),
    id,
    timestamp: unix(h),
    type: "text",
    text: { body },
  } as MetaMessage;
}

async function subscribe(h: Harness): Promise<void> {
  const res = await h.request("POST", "/api/v2/webhooks", {
    body: {
      url: "http://127.0.0.1:9/hook",
      events: ["contact.created", "message.received"],
    },
  });
  assert.equal(res.status, 201, JSON.stringify(res.body));
}

async function eventTypes(h: Harness): Promise<string[]> {
  const rows = await h.container.db.selectFrom("events").select("type")
    .orderBy("seq").execute();
  return rows.map((r) => r.type);
}

async function count(
  h: Harness,
  table: "contacts" | "conversations" | "messages",
): Promise<number> {
  const { n } = await h.container.db.selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return Number(n);
}

async function unread(h: Harness): Promise<number> {
  const row = await h.container.db.selectFrom("conversations")
    .select("unread_count").executeTakeFirstOrThrow();
  return row.unread_count;
}

engineTest(
  "an inbound payload, an echo, a status, an edit and a changed number are applied without an interactive transaction on libSQL",
  async (h) => {
    await subscribe(h);
    forbidTransactions(h.container);
    const channel = h.tenant.channel;
    const body = JSON.stringify(metaChange(h, {
      contacts: [{ profile: { name: "Ana" }, wa_id: PHONE.slice(1) }],
      messages: [text(h, "wamid.in-1", "Hola")],
    }));
    const payloadId = await acceptMetaWebhook(
      h.container,
      new TextEncoder().encode(body),
    );
    await processInboundPayload(h.container, payloadId);
    const payload = await h.container.db.selectFrom("inbound_payloads")
      .select(["processed_at", "error"]).where("id", "=", payloadId)
      .executeTakeFirstOrThrow();
    assert.ok(payload.processed_at);
    assert.equal(payload.error, null);

    await applyEchoMessage(h.container, channel, {
      echo: { ...text(h, "wamid.echo-1", "Hola Ana"), to: PHONE.slice(1) },
      recipient: SENDER,
    });
    assert.equal(
      await applyStatus(h.container, channel, {
        id: "wamid.echo-1",
        status: "delivered",
        timestamp: unix(h),
        recipient_id: PHONE.slice(1),
      } as never),
      true,
    );
    assert.equal(
      await applyInboundMessage(h.container, channel, {
        message: {
          from: PHONE.slice(1),
          id: "wamid.edit-1",
          timestamp: unix(h),
          type: "edit",
          edit: {
            original_message_id: "wamid.in-1",
            message: { type: "text", text: { body: "Hola!" } },
          },
        } as never,
        sender: SENDER,
      }),
      null,
    );
    assert.equal(
      await applyInboundMessage(h.container, channel, {
        message: {
          from: PHONE.slice(1),
          id: "wamid.system-1",
          timestamp: unix(h),
          type: "system",
          system: {
            type: "customer_changed_number",
            new_wa_id: "5491155550399",
          },
        } as never,
        sender: SENDER,
      }),
      null,
    );

    const messages = await h.container.db.selectFrom("messages")
      .select(["wa_message_id", "direction", "status", "content"])
      .orderBy("wa_message_id").execute();
    assert.deepEqual(
      messages.map((m) => [m.wa_message_id, m.direction, m.status]),
      [
        ["wamid.echo-1", "outbound", "delivered"],
        ["wamid.in-1", "inbound", "received"],
        ["wamid.system-1", "inbound", "received"],
      ],
    );
    assert.deepEqual(JSON.parse(messages[1]!.content), { body: "Hola!" });
    const contacts = await h.container.db.selectFrom("contacts")
      .select("phone_number").execute();
    assert.deepEqual(contacts.map((c) => c.phone_number), ["+5491155550399"]);
    assert.equal(await count(h, "conversations"), 1);
    assert.deepEqual(await eventTypes(h), [
      "contact.created",
      "conversation.created",
      "message.received",
      "message.created",
      "message.status_changed",
      "message.updated",
      "message.received",
    ]);
    // The subscription's deliveries: message.received waits behind the
    // contact.created chain made in the same batch.
    const deliveries = await h.container.db.selectFrom("webhook_deliveries")
      .innerJoin("events", "events.id", "webhook_deliveries.event_id")
      .select(["events.type", "webhook_deliveries.after_root_id"])
      .orderBy("events.seq").execute();
    assert.deepEqual(deliveries.map((d) => d.type), [
      "contact.created",
      "message.received",
      "message.received",
    ]);
    assert.ok(deliveries[1]!.after_root_id);
  },
);

engineTest(
  "the same new customer received by two instances at once is one contact: the second batch finds the first's contact and plans again",
  async (h) => {
    await subscribe(h);
    await using other = racingInstance(h);
    const channel = h.tenant.channel;
    const apply = (id: string, on: Container = h.container) =>
      applyInboundMessage(on, channel, {
        message: text(h, id, id),
        sender: SENDER,
      });
    if (h.engine === "libsql") {
      // A's reads find no contact; B stores the customer before A's batch.
      const seen = beforeNextBatch(h, () => apply("wamid.B", other));
      assert.equal(await apply("wamid.A"), null);
      // A's batch refused (its insert found B's contact), then A's again.
      assert.equal(seen.batches, 2);
    } else {
      // SQLite: the transaction holds the write lock: they run one by one.
      await Promise.all([apply("wamid.A"), apply("wamid.B", other)]);
    }
    // And many at once, each instance's reads racing the other's batches.
    await Promise.all(
      Array.from(
        { length: 6 },
        (_, i) => apply(`wamid.C${i}`, i % 2 ? other : h.container),
      ),
    );
    assert.equal(await count(h, "contacts"), 1);
    assert.equal(await count(h, "conversations"), 1);
    assert.equal(await count(h, "messages"), 8);
    const types = await eventTypes(h);
    assert.equal(types.filter((t) => t === "contact.created").length, 1);
    assert.equal(types.filter((t) => t === "conversation.created").length, 1);
    assert.equal(types.filter((t) => t === "message.received").length, 8);
    assert.equal(await unread(h), 8);
  },
);

engineTest(
  "a Meta retry applied by two workers at once stores the message once",
  async (h) => {
    await using other = racingInstance(h);
    const channel = h.tenant.channel;
    const apply = (on: Container) =>
      applyInboundMessage(on, channel, {
        message: text(h, "wamid.twice", "Hola"),
        sender: SENDER,
      });
    if (h.engine === "libsql") {
      const seen = beforeNextBatch(h, () => apply(other));
      assert.equal(await apply(h.container), null);
      // This one's batch, refused by its guard; then its reads find the
      // message and it writes nothing.
      assert.equal(seen.batches, 1);
    } else {
      await Promise.all([apply(h.container), apply(other)]);
    }
    assert.equal(await count(h, "messages"), 1);
    assert.equal(await unread(h), 1);
  },
);

engineTest(
  "a status that races another keeps the rank rule: read, then delivered written meanwhile, ends read",
  async (h) => {
    await using other = racingInstance(h);
    const channel = h.tenant.channel;
    await applyEchoMessage(h.container, channel, {
      echo: { ...text(h, "wamid.out", "Hola"), to: PHONE.slice(1) },
      recipient: SENDER,
    });
    const status = (value: string, on: Container = h.container) =>
      applyStatus(on, channel, {
        id: "wamid.out",
        status: value,
        timestamp: unix(h),
        recipient_id: PHONE.slice(1),
      } as never);
    if (h.engine === "libsql") {
      // Delivered is read as sent -> delivered; read lands before its batch.
      const seen = beforeNextBatch(h, () => status("read", other));
      assert.equal(await status("delivered"), true);
      // Delivered's batch, refused; planned again on read it changes
      // nothing (the rank rule) and sends no batch.
      assert.equal(seen.batches, 1);
    } else {
      await Promise.all([status("delivered"), status("read", other)]);
    }
    const row = await h.container.db.selectFrom("messages").select("status")
      .where("wa_message_id", "=", "wamid.out").executeTakeFirstOrThrow();
    assert.equal(row.status, "read");
    const changes = await h.container.db.selectFrom("events").select("data")
      .where("type", "=", "message.status_changed").orderBy("seq").execute();
    assert.deepEqual(
      changes.map((c) => JSON.parse(c.data).status),
      h.engine === "libsql" ? ["read"] : ["delivered", "read"],
    );
  },
);

engineTest(
  "a message with both ids joins the phone's contact and the BSUID's into one, their conversations too, without an interactive transaction",
  async (h) => {
    forbidTransactions(h.container);
    const channel = h.tenant.channel;
    const userId = "US.13491208655302741918";
    const byPhone = { ...SENDER, name: null };
    const byUser = { ...SENDER, phoneNumber: null, userId, username: "ana" };
    const apply = (id: string, sender: Sender) =>
      applyInboundMessage(h.container, channel, {
        message: text(h, id, id),
        sender,
      });
    await apply("wamid.phone", byPhone);
    await apply("wamid.user", byUser);
    assert.equal(await count(h, "contacts"), 2);
    assert.equal(await count(h, "conversations"), 2);
    await apply("wamid.both", { ...SENDER, userId });
    const contacts = await h.container.db.selectFrom("contacts")
      .select(["id", "phone_number", "user_id", "username", "name"]).execute();
    assert.deepEqual(
      contacts.map((c) => [c.phone_number, c.user_id, c.username, c.name]),
      [[PHONE, userId, "ana", "Ana"]],
    );
    const conversations = await h.container.db.selectFrom("conversations")
      .select(["id", "contact_id", "unread_count"]).execute();
    assert.equal(conversations.length, 1);
    assert.equal(conversations[0]!.contact_id, contacts[0]!.id);
    assert.equal(conversations[0]!.unread_count, 3);
    const messages = await h.container.db.selectFrom("messages")
      .select(["contact_id", "conversation_id"]).execute();
    assert.equal(messages.length, 3);
    for (const m of messages) {
      assert.deepEqual(
        [m.contact_id, m.conversation_id],
        [contacts[0]!.id, conversations[0]!.id],
      );
    }
  },
);

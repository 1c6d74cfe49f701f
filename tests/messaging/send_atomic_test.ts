// POST /messages and POST /messages/batch as atomic units: on libSQL one
// write batch each (no interactive transaction), guarded on what they read.
import assert from "node:assert/strict";
import { engineTest, type Harness } from "../_harness.ts";
import { seedTemplate, templateTo } from "./_helpers.ts";
import { parseSendMessage } from "../../src/domain/messages/outbound.ts";
import { sendMessage } from "../../src/domain/messages/send_message_service.ts";
import {
  acceptBatch,
  acceptMessage,
} from "../../src/domain/messages/send_service.ts";

function templateSend(h: Harness, to: string) {
  return { phoneNumberId: h.tenant.channel.id, ...templateTo(to) };
}

async function contactsOf(h: Harness, phones: string[]) {
  return await h.container.db.selectFrom("contacts")
    .select(["id", "phone_number"]).where("phone_number", "in", phones)
    .execute();
}

/**
 * For a test that writes between a unit's reads and its batch: libSQL only
 * (SQLite's transaction leaves no gap), no transaction allowed, the
 * template seeded and a first send to `phone` made; false on SQLite.
 */
async function raceSetup(h: Harness, phone: string): Promise<boolean> {
  if (h.engine !== "libsql") return false;
  h.container.dbBatch!.forbidTransactions = true;
  await seedTemplate(h);
  const first = await h.request("POST", "/api/v2/messages", {
    body: templateSend(h, phone),
  });
  assert.equal(first.status, 201, JSON.stringify(first.body));
  return true;
}

engineTest(
  "single and batch sends, keyed and replayed, commit without an interactive transaction on libSQL",
  async (h) => {
    if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
    await seedTemplate(h);
    const key = { "Idempotency-Key": "atomic-1" };
    const body = templateSend(h, "+5491155550600");
    const first = await h.request("POST", "/api/v2/messages", {
      body,
      headers: key,
    });
    assert.equal(first.status, 201, JSON.stringify(first.body));
    const again = await h.request("POST", "/api/v2/messages", {
      body,
      headers: key,
    });
    assert.equal(again.headers.get("idempotent-replayed"), "true");
    assert.deepEqual(again.body.data, first.body.data);
    // A known recipient (an existing conversation), then a batch of a known
    // and a new one.
    const known = await h.request("POST", "/api/v2/messages", { body });
    assert.equal(known.status, 201, JSON.stringify(known.body));
    assert.equal(
      known.body.data.conversationId,
      first.body.data.conversationId,
    );
    const batch = await h.request("POST", "/api/v2/messages/batch", {
      body: {
        defaultPhoneNumberId: h.tenant.channel.id,
        messages: [templateTo("+5491155550600"), templateTo("+5491155550601")],
      },
      headers: { "Idempotency-Key": "atomic-batch-1" },
    });
    assert.equal(batch.status, 202, JSON.stringify(batch.body));
    assert.equal(batch.body.data.accepted, 2);
    const messages = await h.container.db.selectFrom("messages")
      .select(["contact_id", "conversation_id"]).execute();
    assert.equal(messages.length, 4);
    assert.equal(
      (await contactsOf(h, ["+5491155550600", "+5491155550601"])).length,
      2,
    );
    const events = await h.container.db.selectFrom("events").select("type")
      .execute();
    const count = (type: string) =>
      events.filter((e) => e.type === type).length;
    assert.deepEqual(
      [
        count("contact.created"),
        count("conversation.created"),
        count("message.created"),
      ],
      [2, 2, 4],
    );
    const jobs = await h.container.db.selectFrom("jobs").select("id")
      .where("kind", "=", "message.send").execute();
    assert.equal(jobs.length, 4);
    const conversation = await h.container.db.selectFrom("conversations")
      .select(["last_message_id", "last_message_status"])
      .where("id", "=", first.body.data.conversationId).executeTakeFirst();
    assert.equal(conversation?.last_message_status, "queued");
  },
);

engineTest(
  "two sends with one new Idempotency-Key in one write: one message, the other replays it",
  async (h) => {
    if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
    await seedTemplate(h);
    const request = {
      accountId: h.tenant.account.id,
      idempotencyKey: "same-moment",
      body: templateSend(h, "+5491155550610"),
    };
    // A known recipient: nothing else of the two units can collide.
    const known = await sendMessage(h.container, {
      ...request,
      idempotencyKey: undefined,
    });
    // Called in one turn: both units read that the key has no record and
    // go in one batch (libSQL) or group (SQLite).
    const [a, b] = await Promise.all([
      sendMessage(h.container, request),
      sendMessage(h.container, request),
    ]);
    assert.deepEqual([a.replayed, b.replayed].sort(), [false, true]);
    assert.deepEqual(a.data, b.data);
    const messages = await h.container.db.selectFrom("messages").select("id")
      .execute();
    assert.deepEqual(
      messages.map((m) => m.id).sort(),
      [known.data.id, a.data.id].sort(),
    );
    const jobs = await h.container.db.selectFrom("jobs").select("id")
      .where("kind", "=", "message.send").execute();
    assert.equal(jobs.length, 2);
    if (h.container.commits.batchStats) {
      assert.equal(
        h.container.commits.batchStats.alone,
        2,
        "the batch failed on the key's guard",
      );
    }
  },
);

engineTest(
  "a contact made under another spelling between a send's reads and its write: the send is planned again and goes to it (libSQL)",
  async (h) => {
    if (!await raceSetup(h, "+5491155550620")) return;
    const parsed = parseSendMessage(templateSend(h, "+5491155550621"));
    assert.ok(parsed.ok);
    let plans = 0;
    const accepted = await h.container.commits.runPlanned(
      async (db, writes) => {
        plans++;
        const message = await acceptMessage(
          db,
          writes,
          h.container,
          h.tenant.account.id,
          parsed.value,
        );
        if (plans === 1) {
          // Another instance's inbound message makes the contact, spelled
          // without the mobile 9, after this plan found none.
          await h.container.db.insertInto("contacts").values({
            id: "ct-raced",
            account_id: h.tenant.account.id,
            phone_number: "+541155550621",
            user_id: null,
            parent_user_id: null,
            username: null,
            name: null,
            email: null,
            tags: "[]",
            custom_fields: "{}",
            opted_in: 1,
            last_message_at: null,
            created_at: "2026-01-01T00:00:00.000Z",
            updated_at: "2026-01-01T00:00:00.000Z",
          }).execute();
        }
        return () => message;
      },
    );
    assert.equal(plans, 2);
    const message = await h.container.db.selectFrom("messages")
      .select("contact_id").where("id", "=", accepted.id).executeTakeFirst();
    assert.equal(message?.contact_id, "ct-raced");
    assert.deepEqual(
      await contactsOf(h, ["+5491155550621", "+541155550621"]),
      [{ id: "ct-raced", phone_number: "+541155550621" }],
      "one person, one contact",
    );
  },
);

engineTest(
  "a send to a new recipient queues its contact.created and conversation.created deliveries, the second waiting for the first, in the same write",
  async (h) => {
    if (h.container.dbBatch) h.container.dbBatch.forbidTransactions = true;
    await seedTemplate(h);
    const hook = await h.request("POST", "/api/v2/webhooks", {
      body: {
        url: "http://127.0.0.1:9/hook",
        events: ["contact.created", "conversation.created"],
      },
    });
    assert.equal(hook.status, 201, JSON.stringify(hook.body));
    const single = await h.request("POST", "/api/v2/messages", {
      body: templateSend(h, "+5491155550630"),
    });
    assert.equal(single.status, 201, JSON.stringify(single.body));
    const batch = await h.request("POST", "/api/v2/messages/batch", {
      body: {
        defaultPhoneNumberId: h.tenant.channel.id,
        messages: [templateTo("+5491155550631")],
      },
    });
    assert.equal(batch.status, 202, JSON.stringify(batch.body));
    const rows = await h.container.db.selectFrom("webhook_deliveries as d")
      .innerJoin("events as e", "e.id", "d.event_id")
      .select(["d.event", "d.status", "d.root_id", "d.after_root_id", "e.data"])
      .execute();
    assert.equal(rows.length, 4);
    for (const phone of ["+5491155550630", "+5491155550631"]) {
      const contact = rows.find((r) =>
        r.event === "contact.created" && r.data.includes(phone)
      )!;
      const conversation = rows.find((r) =>
        r.event === "conversation.created" && r.data.includes(phone)
      )!;
      assert.equal(contact.status, "pending");
      assert.equal(contact.after_root_id, null);
      assert.equal(conversation.status, "pending");
      assert.equal(conversation.after_root_id, contact.root_id);
    }
    const jobs = await h.container.db.selectFrom("jobs").select("id")
      .where("kind", "=", "webhook.deliver").execute();
    assert.equal(jobs.length, 4, "one job per delivery");
  },
);

engineTest(
  "a batch recipient who opts out between the batch's reads and its write is skipped: the batch is planned again (libSQL)",
  async (h) => {
    if (!await raceSetup(h, "+5491155550640")) return;
    const contactId = (await contactsOf(h, ["+5491155550640"]))[0]!.id;
    let plans = 0;
    const result = await h.container.commits.runPlanned(
      async (db, writes) => {
        plans++;
        const out = await acceptBatch(
          db,
          writes,
          {
            clock: h.clock,
            lookups: h.container.lookups,
            config: { sendRatePerSecond: 80 },
          },
          h.tenant.account.id,
          {
            defaultPhoneNumberId: h.tenant.channel.id,
            messages: [
              templateTo("+5491155550640"),
              templateTo("+5491155550641"),
            ],
          },
        );
        if (plans === 1) {
          // The customer writes STOP on another instance meanwhile.
          await h.container.db.updateTable("contacts").set({ opted_in: 0 })
            .where("id", "=", contactId).execute();
        }
        return () => out;
      },
    );
    assert.equal(plans, 2);
    assert.deepEqual(
      result.items.map((i) => i.result),
      ["skipped", "queued"],
    );
    const sends = await h.container.db.selectFrom("messages")
      .select("contact_id").where("lane", "=", "batch").execute();
    assert.equal(sends.length, 1);
    assert.notEqual(sends[0]!.contact_id, contactId);
  },
);

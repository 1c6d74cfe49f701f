// A campaign's event deliveries queue behind live chat's, as its sends queue
// behind live sends: batch events go in PRIORITY.webhookBatch, and a
// customer who writes takes the contact.created a batch made for them along.
import assert from "node:assert/strict";
import { sql } from "kysely";
import { PRIORITY, WEBHOOK_LANES } from "../../src/jobs/queue.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";
import { createJobHandlers, splitHandlers } from "../../src/jobs/registry.ts";
import { createLogger } from "../../src/log.ts";
import { recordStatusChange } from "../../src/domain/messages/status_service.ts";
import { findMessageById } from "../../src/domain/messages/message_repo.ts";
import { toDbTime } from "../../src/db/time.ts";
import { attemptDelivery } from "../../src/domain/webhooks/attempt_service.ts";
import { RetryLater } from "../../src/errors.ts";
import { ENGINES } from "../_harness.ts";
import { EVENT_TYPES } from "../../src/domain/events/event_repo.ts";
import { seedTemplate, templateTo } from "../messaging/_helpers.ts";
import {
  customerWrites,
  type Json,
  nextPhone,
  type WebhookHarness,
  webhookTest,
} from "../_support/webhooks.ts";

/** Every event kind. */
const ALL = [...EVENT_TYPES];

/** POST /messages/batch of template sends to `phones`; returns the message ids. */
async function batchTo(h: WebhookHarness, phones: string[]): Promise<string[]> {
  const res = await h.request("POST", "/api/v2/messages/batch", {
    body: {
      defaultPhoneNumberId: h.tenant.channel.id,
      messages: phones.map((p) => templateTo(p)),
    },
  });
  assert.equal(res.status, 202, JSON.stringify(res.body));
  return res.body.data.items.map((i: Json) => i.message.id);
}

/** What an event is about, in these tests: its contact's phone, or the message of a status change. */
function about(event: string, data: Json): string {
  if (event === "message.status_changed") return data.id;
  return data.phoneNumber ?? data.contact?.phoneNumber;
}

/** The lane (job priority) of each pending delivery's job: "event about" -> priorities. */
async function lanes(h: WebhookHarness): Promise<Map<string, number[]>> {
  const { rows } = await sql<{ event: string; data: string; priority: number }>`
    select d.event, e.data, j.priority from webhook_deliveries d
    join events e on e.id = d.event_id
    join jobs j on j.unique_key = 'webhook.deliver:' || d.id
    where d.status = 'pending' and j.state in ('available', 'retryable')
    order by d.id`.execute(h.container.db);
  const out = new Map<string, number[]>();
  for (const r of rows) {
    const key = `${r.event} ${about(r.event, JSON.parse(r.data))}`;
    out.set(key, [...out.get(key) ?? [], Number(r.priority)]);
  }
  return out;
}

/** A webhook pool of one slot, with the server's lanes: it delivers one attempt at a time, in claim order. */
function onePool(h: WebhookHarness): WorkerPool {
  return new WorkerPool({
    db: h.container.db,
    clock: h.container.clock,
    log: createLogger("silent"),
    handlers: splitHandlers(createJobHandlers(h.container)).webhooks,
    concurrency: 1,
    reserveUrgentSlot: false,
    maxPerGroup: 1,
    lanes: WEBHOOK_LANES,
    leaseMs: 15_000,
  });
}

/** "event about" of each delivery the receiver got, in order. */
function arrivals(received: { json: Json }[]): string[] {
  return received.map(({ json }) =>
    `${json.event} ${about(json.event, json.data)}`
  );
}

webhookTest(
  "a batch's contacts, conversations and status changes are delivered in the lane behind live chat's, and after a live send's and a customer's events",
  async (h, receiver) => {
    await h.subscribe({ url: receiver.url, events: ALL });
    await seedTemplate(h);
    const [b1, b2] = [nextPhone(), nextPhone()];
    const [batchMessage] = await batchTo(h, [b1, b2]);
    const live = nextPhone();
    const res = await h.request("POST", "/api/v2/messages", {
      body: { ...templateTo(live), phoneNumberId: h.tenant.channel.id },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const customer = nextPhone();
    await customerWrites(h, customer, "Hola");
    const liveMessage: string = res.body.data.id;
    const now = toDbTime(h.clock.now());
    await h.container.db.transaction().execute(async (trx) => {
      for (const id of [batchMessage!, liveMessage]) {
        const row = (await findMessageById(trx, id))!;
        assert.ok(
          await recordStatusChange(trx, row, {
            to: "sent",
            now,
            waMessageId: `wamid.${id}`,
          }),
        );
      }
    });

    const { webhook, webhookBatch } = PRIORITY;
    assert.deepEqual(
      Object.fromEntries(await lanes(h)),
      {
        [`contact.created ${b1}`]: [webhookBatch],
        [`contact.created ${b2}`]: [webhookBatch],
        [`conversation.created ${b1}`]: [webhookBatch],
        [`conversation.created ${b2}`]: [webhookBatch],
        [`message.status_changed ${batchMessage}`]: [webhookBatch],
        [`contact.created ${live}`]: [webhook],
        [`conversation.created ${live}`]: [webhook],
        [`message.status_changed ${liveMessage}`]: [webhook],
        [`contact.created ${customer}`]: [webhook],
        [`conversation.created ${customer}`]: [webhook],
        [`message.received ${customer}`]: [webhook],
      },
    );
    // One slot: every live event arrives before the first of the batch,
    // although the batch's were queued first.
    await onePool(h).runOnce();
    const got = arrivals(receiver.received);
    assert.equal(got.length, 11, got.join("\n"));
    const batchAt = got.map((g, i) =>
      [b1, b2, batchMessage].some((p) => g.endsWith(` ${p}`)) ? i : -1
    )
      .filter((i) => i >= 0);
    assert.deepEqual(batchAt, [6, 7, 8, 9, 10], got.join("\n"));
  },
);

webhookTest(
  "a customer who writes while the contact.created a batch made for them is queued takes it along to the live lane, ahead of the campaign",
  async (h, receiver) => {
    await h.subscribe({ url: receiver.url, events: ALL });
    await seedTemplate(h);
    const earlier = [nextPhone(), nextPhone()];
    await batchTo(h, earlier);
    h.clock.advance(1);
    const customer = nextPhone();
    await batchTo(h, [customer]);
    await customerWrites(h, customer, "¿Quién es?");

    const { webhook, webhookBatch } = PRIORITY;
    const before = await lanes(h);
    assert.deepEqual(before.get(`contact.created ${customer}`), [webhook]);
    assert.deepEqual(before.get(`message.received ${customer}`), [webhook]);
    // The batch's conversation is not what the customer is waiting for.
    assert.deepEqual(before.get(`conversation.created ${customer}`), [
      webhookBatch,
    ]);
    assert.deepEqual(before.get(`contact.created ${earlier[0]}`), [
      webhookBatch,
    ]);

    await onePool(h).runOnce();
    const got = arrivals(receiver.received);
    assert.equal(got.length, 7, got.join("\n"));
    assert.deepEqual(got.slice(0, 2), [
      `contact.created ${customer}`,
      `message.received ${customer}`,
    ]);
  },
);

webhookTest(
  "a failed attempt's retry stays in its lane",
  async (h, receiver) => {
    receiver.answer(() => new Response("busy", { status: 503 }));
    await h.subscribe({ url: receiver.url, events: ["contact.created"] });
    await seedTemplate(h);
    const [campaign] = [nextPhone()];
    await batchTo(h, [campaign!]);
    const live = nextPhone();
    const res = await h.request("POST", "/api/v2/contacts", {
      body: { phoneNumber: live, name: "Ana" },
    });
    assert.equal(res.status, 201);
    assert.equal(await h.deliver(), 2);
    assert.equal(receiver.received.length, 2);
    const { webhook, webhookBatch } = PRIORITY;
    assert.deepEqual(Object.fromEntries(await lanes(h)), {
      [`contact.created ${campaign}`]: [webhookBatch],
      [`contact.created ${live}`]: [webhook],
    });
  },
);

for (const engine of ENGINES) {
  webhookTest(
    `[${engine}] a live attempt put back behind a contact.created retry of the batch lane takes that retry along (on libSQL without a transaction)`,
    async (h) => {
      await h.subscribe({ url: "http://127.0.0.1:9/", events: ALL });
      await seedTemplate(h);
      const customer = nextPhone();
      await batchTo(h, [customer]);
      await customerWrites(h, customer, "Hola");
      const db = h.container.db;
      const jobOf = async (event: string) => {
        const { rows } = await sql<{ id: string; priority: number }>`
        select d.id, j.priority from webhook_deliveries d
        join jobs j on j.unique_key = 'webhook.deliver:' || d.id
        where d.event = ${event}`.execute(db);
        return rows[0]!;
      };
      // As a retry queued after the raise leaves it (its attempt was running
      // then): back in the batch lane.
      const first = await jobOf("contact.created");
      await sql`update jobs set priority = ${PRIORITY.webhookBatch}
      where unique_key = ${`webhook.deliver:${first.id}`}`.execute(db);
      const waiting = await jobOf("message.received");
      assert.equal(Number(waiting.priority), PRIORITY.webhook);
      const lease = { id: "j", leaseToken: "t", priority: PRIORITY.webhook };
      if (h.engine === "libsql") h.container.dbBatch!.forbidTransactions = true;
      await assert.rejects(
        attemptDelivery(h.container, waiting.id, {
          lease,
          markCompleted: () => {},
        }),
        (err) => err instanceof RetryLater,
      );
      assert.equal(
        Number((await jobOf("contact.created")).priority),
        PRIORITY.webhook,
      );
    },
    { engine },
  );
}

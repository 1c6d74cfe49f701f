import assert from "node:assert/strict";
import { pruneAll } from "../../src/jobs/maintenance.ts";
import { createContact, nextPhone, webhookTest } from "../_support/webhooks.ts";

const DAY = 24 * 3_600_000;

webhookTest(
  "pruning drops log rows and delivered events past retention, and keeps what a pending delivery needs",
  async (h, receiver) => {
    let failing = false;
    receiver.answer(() =>
      failing ? new Response("no", { status: 500 }) : new Response("ok")
    );
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
    });
    await createContact(h, nextPhone()); // delivered at once
    await h.deliver();
    failing = true;
    await createContact(h, nextPhone()); // fails: its retry stays pending
    await h.deliver();
    const db = h.container.db;
    // Park the pending retry far in the future so it is still pending later.
    await db.updateTable("webhook_deliveries").set({
      next_attempt_at: "2099-01-01T00:00:00.000Z",
    }).where("status", "=", "pending").execute();
    await db.updateTable("jobs").set({ run_at: "2099-01-01T00:00:00.000Z" })
      .where("kind", "=", "webhook.deliver").where("state", "=", "available")
      .execute();
    h.clock.advance(31 * DAY);
    await createContact(h, nextPhone()); // recent: kept
    const events = async () =>
      (await db.selectFrom("events").select("id").execute()).length;
    const rows = async (status: string) =>
      (await db.selectFrom("webhook_deliveries").select("id")
        .where("webhook_id", "=", hook.id).where("status", "=", status)
        .execute()).length;
    assert.equal(await events(), 3);
    assert.equal(await rows("success"), 1);
    assert.equal(await rows("failed"), 1);
    assert.equal(await rows("pending"), 2);

    const pruned = await pruneAll(db, h.clock.now(), 30);
    assert.equal(pruned.webhookDeliveries, 2, "the old success and failure");
    assert.equal(pruned.events, 1, "only the fully delivered old event");
    assert.equal(await events(), 2);
    assert.equal(await rows("success"), 0);
    assert.equal(await rows("failed"), 0);
    assert.equal(
      await rows("pending"),
      2,
      "the parked retry and the new event",
    );
    // What stays can still be delivered: the parked retry finds its event.
    await db.updateTable("webhook_deliveries").set({
      next_attempt_at: h.clock.now().toISOString(),
    }).where("status", "=", "pending").execute();
    await db.updateTable("jobs").set({ run_at: h.clock.now().toISOString() })
      .where("kind", "=", "webhook.deliver").where("state", "=", "available")
      .execute();
    failing = false;
    assert.equal(await h.deliver(), 2);
    assert.equal(await rows("success"), 2);
  },
);

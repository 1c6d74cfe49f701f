// The delivery engine on a real sqld: attempts recorded through group commit
// (savepoints in an interactive libSQL transaction), retries, a disabled
// queue skipped in batches, replay and the catch-up feed.
import assert from "node:assert/strict";
import {
  createContact,
  type Json,
  nextPhone,
  webhookTest,
} from "../_support/webhooks.ts";

webhookTest(
  "[libsql] deliveries, retries, skips and replays work on sqld",
  async (h, receiver) => {
    assert.equal(h.engine, "libsql");
    let failing = true;
    receiver.answer(() =>
      failing ? new Response("down", { status: 503 }) : new Response("ok")
    );
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
    });
    const log = async (q = "") =>
      (await h.request("GET", `/api/v2/webhooks/${hook.id}/deliveries${q}`))
        .body.data as Json[];
    for (let i = 0; i < 3; i++) await createContact(h, nextPhone());
    assert.equal(await h.deliver(), 3);
    assert.equal((await log("?status=failed")).length, 3);
    assert.equal((await log("?status=pending")).length, 3);
    failing = false;
    h.clock.advance(7_000);
    assert.equal(await h.deliver(), 3);
    assert.equal((await log("?status=success")).length, 3);
    const state = (await h.request("GET", `/api/v2/webhooks/${hook.id}`)).body
      .data;
    assert.equal(state.consecutiveFailures, 0);
    assert.equal(state.lastDeliveryStatus, "success");

    // Disabled by hand: queued attempts are skipped at once, new events too.
    failing = true;
    await createContact(h, nextPhone());
    await h.deliver(); // fails, retry queued
    await h.request("PATCH", `/api/v2/webhooks/${hook.id}`, {
      body: { enabled: false },
    });
    await createContact(h, nextPhone());
    assert.equal((await log("?status=pending")).length, 0);
    const skipped = await log("?status=skipped");
    assert.equal(skipped.length, 2);
    // Enabled again, a skipped event replays with its own eventId.
    failing = false;
    await h.request("PATCH", `/api/v2/webhooks/${hook.id}`, {
      body: { enabled: true },
    });
    const replay = await h.request(
      "POST",
      `/api/v2/webhooks/${hook.id}/replay/${skipped[0].id}`,
    );
    assert.equal(replay.status, 202, JSON.stringify(replay.body));
    assert.equal(await h.deliver(), 1);
    assert.equal(receiver.received.at(-1)!.json.eventId, skipped[0].eventId);

    const feed = await h.request("GET", "/api/v2/events?limit=100");
    assert.equal(feed.body.data.length, 5);
  },
  { engine: "libsql" },
);

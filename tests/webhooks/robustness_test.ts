// Review findings, each pinned: a local failure is a logged failed attempt,
// an attempt cut off at shutdown is not recorded, and skipping a disabled
// subscription's queue never touches an enabled one.
import assert from "node:assert/strict";
import { blackhole, startFaultServer } from "../_support/fault_server.ts";
import { waitFor } from "../_support/wait.ts";
import { skipPending } from "../../src/domain/webhooks/delivery_repo.ts";
import {
  createContact,
  createWebhookHarness,
  nextPhone,
  webhookTest,
} from "../_support/webhooks.ts";

webhookTest(
  "a secret that cannot be decrypted is a logged failed attempt, retried, never a lost row",
  async (h, receiver) => {
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
      headers: { "X-Api-Key": "k" },
    });
    await h.container.db.updateTable("webhooks").set({
      headers_enc: "v1.broken.x",
    })
      .where("id", "=", hook.id).execute();
    await createContact(h, nextPhone());
    assert.equal(await h.deliver(), 1);
    assert.equal(receiver.received.length, 0, "nothing was sent");
    const log = await h.request(
      "GET",
      `/api/v2/webhooks/${hook.id}/deliveries`,
    );
    const failed = log.body.data.find((r: { status: string }) =>
      r.status === "failed"
    );
    assert.equal(failed.outcome, "error");
    assert.match(failed.errorMessage, /cannot be decrypted/);
    assert.equal(
      log.body.data.filter((r: { status: string }) => r.status === "pending")
        .length,
      1,
      "the next attempt is scheduled",
    );
  },
);

webhookTest(
  "skipping a queue leaves an enabled subscription's pending attempts alone",
  async (h, receiver) => {
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
    });
    await createContact(h, nextPhone());
    const skipped = await skipPending(h.container.commits, hook.id, {
      now: h.clock.now().toISOString(),
      limit: 100,
    });
    assert.equal(skipped, 0);
    assert.equal(await h.deliver(), 1);
    assert.equal(receiver.received.length, 1);
  },
);

Deno.test({
  name: "an attempt cut off at shutdown is not recorded and runs again",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startFaultServer();
    server.script(blackhole());
    try {
      await using h = await createWebhookHarness();
      const hook = await h.subscribe({
        url: server.url("/hook"),
        events: ["contact.created"],
      });
      await createContact(h, nextPhone());
      const running = h.deliver();
      await waitFor(() => server.requests.length === 1, {
        what: "the attempt on the wire",
      });
      assert.equal(await h.pool.drain(50), false, "released at shutdown");
      await running;
      const rows = await h.container.db.selectFrom("webhook_deliveries")
        .selectAll().where("webhook_id", "=", hook.id).execute();
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.status, "pending");
      assert.equal(rows[0]!.attempted_at, null);
      const job = await h.container.db.selectFrom("jobs").selectAll()
        .where("kind", "=", "webhook.deliver").executeTakeFirstOrThrow();
      assert.equal(job.state, "available");
      assert.equal(job.attempt, 0, "the cut-off run does not count");
      const hookNow = await h.request("GET", `/api/v2/webhooks/${hook.id}`);
      assert.equal(hookNow.body.data.consecutiveFailures, 0);
    } finally {
      await server.close();
    }
  },
});

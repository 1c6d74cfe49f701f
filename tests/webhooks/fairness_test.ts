// The running server's webhook pool (startBackground, as `serve` starts it):
// one account's receivers that hold every request keep to its
// WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT, and another account's deliveries
// arrive meanwhile instead of waiting for a slot.
import assert from "node:assert/strict";
import { createHarness, ENGINES } from "../_harness.ts";
import { gate, waitFor } from "../_support/wait.ts";
import { nextPhone, startReceiver } from "../_support/webhooks.ts";
import { startBackground } from "../../src/lifecycle.ts";

for (const engine of ENGINES) {
  Deno.test({
    name:
      `[${engine}] one account's held receivers keep to its share of the webhook slots while another account's deliveries arrive`,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => {
      const held = gate();
      let holding = 0;
      const slow = startReceiver(async () => {
        holding++;
        await held.opened;
        return new Response("ok");
      });
      const fast = startReceiver();
      await using h = await createHarness({
        engine,
        // 8 slots: 2 per account.
        env: { WEBHOOK_CONCURRENCY: "8", WORKERS: "2" },
      });
      const background = startBackground(h.container);
      try {
        for (let i = 0; i < 3; i++) {
          const res = await h.request("POST", "/api/v2/webhooks", {
            body: { url: `${slow.url}?s=${i}`, events: ["contact.created"] },
          });
          assert.equal(res.status, 201, JSON.stringify(res.body));
        }
        const other = await h.makeTenant("other-account");
        const theirs = await h.request("POST", "/api/v2/webhooks", {
          body: { url: fast.url, events: ["contact.created"] },
          key: other.key,
        });
        assert.equal(theirs.status, 201);
        for (let i = 0; i < 4; i++) {
          const res = await h.request("POST", "/api/v2/contacts", {
            body: { phoneNumber: nextPhone() },
          });
          assert.equal(res.status, 201);
        }
        await waitFor(() => holding >= 2, {
          what: "the first account's two attempts at its receivers",
        });
        const res = await h.request("POST", "/api/v2/contacts", {
          body: { phoneNumber: nextPhone() },
          key: other.key,
        });
        assert.equal(res.status, 201);
        await waitFor(() => fast.received.length === 1, {
          what: "the other account's delivery, while the first's are held",
        });
        assert.equal(fast.received[0]!.json.event, "contact.created");
        assert.equal(holding, 2, "12 attempts queued, 2 in flight");
        held.open();
        await waitFor(() => slow.received.length === 12, {
          what: "the first account's 12 deliveries, once released",
        });
      } finally {
        held.open();
        for (const part of background) await part.stop();
        await slow.stop();
        await fast.stop();
      }
    },
  });
}

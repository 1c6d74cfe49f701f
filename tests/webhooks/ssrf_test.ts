// The address guard at the delivery level: what was checked when the URL was
// saved is checked again on the address actually dialled.
import assert from "node:assert/strict";
import { createWebhookHarness } from "../_support/webhooks.ts";
import { startFaultServer } from "../_support/fault_server.ts";
import { createContact, nextPhone } from "../_support/webhooks.ts";

Deno.test({
  name:
    "a name that resolves public when saved and to loopback when sent is blocked, and nothing connects",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const server = await startFaultServer();
    let answers = 0;
    // The first answer (the create-time check) is public, every later one loopback.
    const resolver = (host: string) => {
      assert.equal(host, "hooks.rebind.test");
      return Promise.resolve(
        answers++ === 0 ? ["93.184.215.14"] : ["127.0.0.1"],
      );
    };
    try {
      await using h = await createWebhookHarness({
        env: {
          WEBHOOK_ALLOW_PRIVATE_NETWORKS: "false",
          WEBHOOK_ALLOW_HTTP: "true",
        },
        containerOverrides: { resolver },
      });
      const hook = await h.subscribe({
        url: `http://hooks.rebind.test:${server.port}/hook`,
        events: ["contact.created"],
      });
      await createContact(h, nextPhone());
      assert.equal(await h.deliver(), 1);
      assert.ok(answers >= 2, "resolved again at send time");
      assert.equal(server.connections, 0, "no socket reached the receiver");
      const log = await h.request(
        "GET",
        `/api/v2/webhooks/${hook.id}/deliveries?status=failed`,
      );
      const [row] = log.body.data;
      assert.equal(row.outcome, "blocked");
      assert.equal(row.statusCode, null);
      assert.match(row.errorMessage, /127\.0\.0\.1/);
      assert.match(row.errorMessage, /loopback/);
      assert.equal(
        h.container.metrics.webhookDeliveries.get({
          outcome: "blocked",
          kind: "event",
        }),
        1,
      );
    } finally {
      await server.close();
    }
  },
});

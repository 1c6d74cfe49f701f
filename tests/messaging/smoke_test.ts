import assert from "node:assert/strict";
import { createMessagingHarness } from "../_support/messaging.ts";

Deno.test({
  name: "an inbound text opens the window and a reply reaches read",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createMessagingHarness({ realTime: true });
    await h.inbound({
      from: "+5491122334455",
      name: "Ana",
      type: "text",
      text: { body: "Hola" },
    });
    const send = await h.request("POST", "/api/v2/messages", {
      body: {
        phoneNumberId: h.tenant.channel.id,
        to: "+5491122334455",
        type: "text",
        text: { body: "Hi" },
      },
    });
    // The inbound may still be processing: retry until the window is open.
    let id = send.body?.data?.id;
    for (let i = 0; !id && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 50));
      const again = await h.request("POST", "/api/v2/messages", {
        body: {
          phoneNumberId: h.tenant.channel.id,
          to: "+5491122334455",
          type: "text",
          text: { body: "Hi" },
        },
      });
      id = again.body?.data?.id;
    }
    assert.ok(id, "send accepted");
    const msg = await h.waitForStatus(id, ["read"]);
    assert.match(String(msg.waMessageId), /^wamid\./);
  },
});

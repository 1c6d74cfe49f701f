import assert from "node:assert/strict";
import { createHarness, type Harness } from "../_harness.ts";
import { createMessagingHarness } from "../_support/messaging.ts";
import { waitFor } from "../_support/wait.ts";
import {
  escapeUnicode,
  signMetaBody,
} from "../../src/upstream/meta_signature.ts";

const SECRET = "test-app-secret";

function inboundEnvelope(h: Harness, message: Record<string, unknown>) {
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: h.tenant.channel.wabaId,
      changes: [{
        field: "messages",
        value: {
          messaging_product: "whatsapp",
          metadata: {
            display_phone_number: h.tenant.channel.phoneNumber.slice(1),
            phone_number_id: h.tenant.channel.upstreamPhoneNumberId,
          },
          contacts: [{ profile: { name: "Num" }, wa_id: "5491177778888" }],
          messages: [message],
        },
      }],
    }],
  };
}

async function countRows(h: Harness, table: "inbound_payloads" | "messages") {
  const row = await h.container.db.selectFrom(table)
    .select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  return Number(row.n);
}

Deno.test({
  name: "an inbound message with a numeric timestamp is stored, not dropped",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createMessagingHarness();
    const body = escapeUnicode(JSON.stringify(inboundEnvelope(h, {
      from: "5491177778888",
      id: "wamid.numeric-ts",
      timestamp: Math.floor(Date.now() / 1000),
      type: "text",
      text: { body: "número" },
    })));
    const res = await fetch(`${h.baseUrl}/meta/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": await signMetaBody(SECRET, body),
      },
      body,
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    const row = await waitFor(
      () =>
        h.container.db.selectFrom("messages").select(["content"])
          .where("wa_message_id", "=", "wamid.numeric-ts").executeTakeFirst(),
      {
        what: "the message to be stored",
      },
    );
    assert.deepEqual(JSON.parse(row.content), { body: "número" });
  },
});

Deno.test("a chunked webhook body over the limit is refused before it is read whole, and nothing is stored", async () => {
  await using h = await createHarness();
  const chunk = new TextEncoder().encode("x".repeat(1024 * 1024));
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      // 64 MiB on offer; the server must stop long before.
      if (sent++ >= 64) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const res = await h.app.fetch(
    new Request("http://localhost/meta/webhook", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": "sha256=00",
      },
      body: stream,
    }),
  );
  assert.equal(res.status, 413);
  assert.equal((await res.json()).error.code, "PAYLOAD_TOO_LARGE");
  assert.ok(sent < 64, `read ${sent} MiB before refusing`);
  assert.equal(await countRows(h, "inbound_payloads"), 0);
});

import assert from "node:assert/strict";
import { createMessagingHarness } from "../_support/messaging.ts";
import { waitFor } from "../_support/wait.ts";
import { createHarness } from "../_harness.ts";
import { inboundEnvelope, postWebhook, signedBody } from "./_helpers.ts";

Deno.test({
  name: "an inbound message with a numeric timestamp is stored, not dropped",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createMessagingHarness();
    const { raw, signature } = await signedBody(inboundEnvelope(h, {
      id: "wamid.numeric-ts",
      timestamp: Math.floor(Date.now() / 1000),
      type: "text",
      text: { body: "número" },
    }, "+5491177778888"));
    assert.equal((await postWebhook(h, raw, signature)).status, 200);
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

Deno.test({
  name:
    "an inbound timestamp past the range of a date is read as the time of arrival",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createMessagingHarness();
    const before = Date.now();
    const { raw, signature } = await signedBody(inboundEnvelope(h, {
      id: "wamid.huge-ts",
      timestamp: "99999999999999999999",
      type: "text",
      text: { body: "fuera de rango" },
    }, "+5491177778899"));
    assert.equal((await postWebhook(h, raw, signature)).status, 200);
    const row = await waitFor(
      () =>
        h.container.db.selectFrom("messages").select(["upstream_timestamp"])
          .where("wa_message_id", "=", "wamid.huge-ts").executeTakeFirst(),
      { what: "the message to be stored" },
    );
    const at = Date.parse(row.upstream_timestamp ?? "");
    assert.ok(
      at >= before - 1_000 && at <= Date.now(),
      row.upstream_timestamp ?? "null",
    );
  },
});

Deno.test("a chunked webhook body over 3 MB is refused before it is read whole, and nothing is stored", async () => {
  await using h = await createHarness();
  const chunk = new Uint8Array(64 * 1024).fill(0x78);
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      // 64 MiB on offer; the server must stop just past 3 MiB.
      if (sent++ >= 1024) controller.close();
      else controller.enqueue(chunk);
    },
  });
  const res = await h.app.fetch(
    new Request("http://localhost/meta/webhook", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": `sha256=${"00".repeat(32)}`,
      },
      body: stream,
    }),
  );
  assert.equal(res.status, 413);
  assert.equal((await res.json()).error.code, "PAYLOAD_TOO_LARGE");
  assert.ok(
    sent <= 3 * 16 + 4,
    `read ${sent} chunks of 64 KiB before refusing`,
  );
  const stored = await h.container.db.selectFrom("inbound_payloads")
    .select((eb) => eb.fn.countAll<number>().as("n")).executeTakeFirstOrThrow();
  assert.equal(Number(stored.n), 0);
});

Deno.test("without META_APP_SECRET every post is refused 401 unread", async () => {
  await using h = await createHarness({ env: { META_APP_SECRET: "" } });
  let pulled = false;
  const res = await h.app.fetch(
    new Request("http://localhost/meta/webhook", {
      method: "POST",
      headers: { "x-hub-signature-256": `sha256=${"00".repeat(32)}` },
      body: new ReadableStream<Uint8Array>({
        pull(controller) {
          pulled = true;
          controller.close();
        },
      }, { highWaterMark: 0 }),
    }),
  );
  assert.equal(res.status, 401);
  assert.equal(
    (await res.json()).error.message,
    "Webhook signature cannot be verified",
  );
  assert.equal(pulled, false);
});

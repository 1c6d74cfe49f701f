import assert from "node:assert/strict";
import { createMessagingHarness } from "../_support/messaging.ts";
import { waitFor } from "../_support/wait.ts";
import { createHarness } from "../_harness.ts";
import { inboundEnvelope, postWebhook, signedBody } from "./_helpers.ts";
import { WEBHOOK_GATE_LIMITS } from "../../src/http/webhook_gate.ts";

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
    const row = await h.until(
      () =>
        h.container.db.selectFrom("messages").select(["content"])
          .where("wa_message_id", "=", "wamid.numeric-ts").executeTakeFirst(),
      "the message to be stored",
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
    const before = h.clock.now().getTime();
    const { raw, signature } = await signedBody(inboundEnvelope(h, {
      id: "wamid.huge-ts",
      timestamp: "99999999999999999999",
      type: "text",
      text: { body: "fuera de rango" },
    }, "+5491177778899"));
    assert.equal((await postWebhook(h, raw, signature)).status, 200);
    const row = await h.until(
      () =>
        h.container.db.selectFrom("messages").select(["upstream_timestamp"])
          .where("wa_message_id", "=", "wamid.huge-ts").executeTakeFirst(),
      "the message to be stored",
    );
    const at = Date.parse(row.upstream_timestamp ?? "");
    assert.ok(
      at >= before - 1_000 && at <= h.clock.now().getTime(),
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

Deno.test({
  name:
    "bodies trickled into every read slot from fresh addresses are cut off at the read deadline, so a signed post from another address gets in",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createHarness({
      env: { META_WEBHOOK_READ_TIMEOUT_MS: "300" },
    });
    const post = async (address: string, body: BodyInit, signature: string) =>
      await h.app.fetch(
        new Request("http://localhost/meta/webhook", {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "x-hub-signature-256": signature,
          },
          body,
        }),
        { remoteAddr: { hostname: address, port: 40_000, transport: "tcp" } },
      );
    // Every slot taken: maxReads bodies from four addresses, each sending
    // one byte and then nothing.
    const { maxReads } = WEBHOOK_GATE_LIMITS;
    let admitted = 0;
    const answers: Response[] = [];
    for (let i = 0; i < maxReads; i++) {
      const address = `203.0.113.${(i % 4) + 1}`;
      let pulls = 0;
      const trickle = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (pulls++ > 0) return new Promise<void>(() => {});
          admitted++;
          controller.enqueue(new Uint8Array([0x7b]));
        },
      }, { highWaterMark: 0 });
      void post(address, trickle, `sha256=${"00".repeat(32)}`)
        .then((res) => answers.push(res));
    }
    await waitFor(() => admitted === maxReads, {
      what: "every read slot to be taken",
    });
    await waitFor(() => answers.length === maxReads, {
      what: "every trickled body to be cut off",
      timeoutMs: 5_000,
    });
    // Cut off at the deadline, or evicted sooner for one waiting (chunked
    // bodies reserve 3 MB each, so not all 16 fit the byte bound at once).
    for (const res of answers) {
      const body = await res.json();
      if (res.status === 503) continue;
      assert.equal(res.status, 400);
      assert.equal(body.error.code, "VALIDATION_ERROR");
      assert.match(body.error.message, /did not arrive within 300 ms/);
    }
    assert.ok(answers.some((res) => res.status === 400));
    const { raw, signature } = await signedBody({
      object: "whatsapp_business_account",
      entry: [],
    });
    const signed = await post("198.51.100.7", raw, signature);
    assert.equal(signed.status, 200, await signed.clone().text());
  },
});

import assert from "node:assert/strict";
import { createHash, createHmac } from "node:crypto";
import {
  signatureHeader,
  verifySignature,
} from "../../src/domain/webhooks/envelope.ts";
import { SIGNATURE_VECTOR } from "../_support/signature_vector.ts";
import {
  createContact,
  nextPhone,
  type WebhookHarness,
  webhookTest,
} from "../_support/webhooks.ts";

Deno.test("the signature matches the fixed test vector, and verification checks body, secret and age", () => {
  const v = SIGNATURE_VECTOR;
  assert.equal(signatureHeader(v.secret, v.timestamp, v.body), v.header);
  const at = { nowSeconds: v.timestamp + 299 };
  assert.equal(verifySignature(v.secret, v.header, v.body, at), true);
  assert.equal(
    verifySignature(v.secret, v.header, v.body + " ", at),
    false,
    "altered body",
  );
  assert.equal(
    verifySignature(`${v.secret}x`, v.header, v.body, at),
    false,
    "other secret",
  );
  assert.equal(
    verifySignature(v.secret, v.header, v.body, {
      nowSeconds: v.timestamp + 301,
    }),
    false,
    "older than 5 minutes",
  );
  assert.equal(
    verifySignature(v.secret, "t=1763640000", v.body, at),
    false,
    "no v1",
  );
});

Deno.test("signatures from the keyed states are node's HMAC for every key length, reused and interleaved", () => {
  const secrets = [
    "k",
    SIGNATURE_VECTOR.secret,
    "x".repeat(64), // exactly one block: used as is
    "y".repeat(65), // longer than a block: hashed first
    "clave-ñandú-🔑".repeat(6), // multi-byte UTF-8, past a block
  ];
  const bodies = ['{"a":1}', "", `{"data":"${"z".repeat(5_000)}"}`];
  // Twice over, each secret between the others: a used state must not leak into the next.
  for (const round of [1, 2]) {
    for (const secret of secrets) {
      for (const body of bodies) {
        const t = 1763640000 + round;
        const hex = createHmac("sha256", secret).update(`${t}.${body}`)
          .digest("hex");
        assert.equal(signatureHeader(secret, t, body), `t=${t},v1=${hex}`);
      }
    }
  }
});

async function eventRow(h: WebhookHarness, type: string) {
  return await h.container.db.selectFrom("events").selectAll()
    .where("account_id", "=", h.tenant.account.id).where("type", "=", type)
    .orderBy("seq", "desc").executeTakeFirstOrThrow();
}

webhookTest(
  "a delivery carries exactly the spec's headers and envelope, signed with the secret",
  async (h, receiver) => {
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
      headers: { "X-Api-Key": "receiver-key" },
    });
    const contact = await createContact(h, nextPhone());
    assert.equal(await h.deliver(), 1);
    assert.equal(receiver.received.length, 1);
    const got = receiver.received[0]!;
    const event = await eventRow(h, "contact.created");
    const at = h.clock.now().toISOString();

    assert.deepEqual([...got.headers.keys()].sort(), [
      "content-length",
      "content-type",
      "host",
      "user-agent",
      "x-api-key",
      "x-service-first-attempt-at",
      "x-service-signature",
      "x-service-webhook-attempt",
      "x-service-webhook-event",
      "x-service-webhook-id",
      "x-service-webhook-version",
    ]);
    assert.equal(got.method, "POST");
    assert.equal(got.path, "/hook");
    assert.equal(got.headers.get("content-type"), "application/json");
    assert.equal(got.headers.get("user-agent"), "Service-Webhooks/1.0");
    assert.equal(got.headers.get("x-service-webhook-id"), hook.id);
    assert.equal(got.headers.get("x-service-webhook-event"), "contact.created");
    assert.equal(got.headers.get("x-service-webhook-version"), "v1");
    assert.equal(got.headers.get("x-service-webhook-attempt"), "1");
    assert.equal(got.headers.get("x-service-first-attempt-at"), at);
    assert.equal(got.headers.get("x-api-key"), "receiver-key");
    assert.equal(got.headers.get("host"), `127.0.0.1:${receiver.port}`);

    // Byte for byte: the key order of the envelope and the stored data text.
    assert.equal(
      got.raw,
      `{"event":"contact.created","eventId":"${event.id}","webhookId":"${hook.id}","deliveredAt":"${at}","attempt":1,"data":${
        JSON.stringify(contact)
      }}`,
    );
    const t = Math.floor(h.clock.now().getTime() / 1_000);
    assert.equal(
      got.headers.get("x-service-signature"),
      signatureHeader(hook.secret, t, got.raw),
    );
    assert.ok(
      verifySignature(
        hook.secret,
        got.headers.get("x-service-signature")!,
        got.raw,
        { nowSeconds: t },
      ),
    );

    const log = await h.request(
      "GET",
      `/api/v2/webhooks/${hook.id}/deliveries`,
    );
    assert.equal(log.status, 200);
    assert.equal(log.body.data.length, 1);
    const row = log.body.data[0];
    assert.equal(row.status, "success");
    assert.equal(row.success, true);
    assert.equal(row.statusCode, 200);
    assert.equal(row.outcome, "2xx");
    assert.equal(row.attempt, 1);
    assert.equal(row.kind, "event");
    assert.equal(row.eventId, event.id);
    assert.equal(row.event, "contact.created");
    assert.equal(row.responseBody, "ok");
    assert.equal(row.nextAttemptAt, null);
    assert.equal(
      row.payloadHash,
      createHash("sha256").update(JSON.stringify(contact)).digest("hex"),
    );
    // The payload itself is kept nowhere in the log.
    const stored = await h.container.db.selectFrom("webhook_deliveries")
      .selectAll().execute();
    assert.equal(JSON.stringify(stored).includes(contact.phoneNumber), false);

    const after = (await h.request("GET", `/api/v2/webhooks/${hook.id}`)).body
      .data;
    assert.equal(after.lastDeliveryStatus, "success");
    assert.equal(after.lastDeliveryAt, at);
    assert.equal(after.consecutiveFailures, 0);
  },
);

webhookTest(
  "an event goes to every matching subscription and to no other",
  async (h, receiver) => {
    const both = await h.subscribe({
      url: receiver.url,
      events: ["contact.created", "message.received"],
    });
    const also = await h.subscribe({
      url: `${receiver.url}?second`,
      events: ["contact.created"],
    });
    await h.subscribe({
      url: receiver.url,
      events: ["message.status_changed"],
    });
    const other = await h.makeTenant(
      `other-${crypto.randomUUID().slice(0, 6)}`,
    );
    await h.request("POST", "/api/v2/webhooks", {
      key: other.key,
      body: { url: receiver.url, events: ["contact.created"] },
    });
    await createContact(h, nextPhone());
    assert.equal(await h.deliver(), 2);
    assert.deepEqual(
      receiver.received.map((r) => r.json.webhookId).sort(),
      [both.id, also.id].sort(),
    );
    const eventIds = new Set(receiver.received.map((r) => r.json.eventId));
    assert.equal(eventIds.size, 1, "both carry the same eventId");
  },
);

webhookTest(
  "POST /webhooks/:id/test sends the samplePayload it returns, once, and touches no counter",
  async (h, receiver) => {
    const hook = await h.subscribe({
      url: receiver.url,
      events: ["contact.created"],
      headers: { "X-Api-Key": "k" },
    });
    receiver.answer(() => new Response("nope", { status: 500 }));
    const res = await h.request("POST", `/api/v2/webhooks/${hook.id}/test`);
    assert.equal(res.status, 202, JSON.stringify(res.body));
    const { delivery, samplePayload } = res.body.data;
    assert.equal(delivery.kind, "test");
    assert.equal(delivery.status, "pending");
    assert.equal(samplePayload.event, "message.received");
    assert.equal(samplePayload.webhookId, hook.id);
    assert.equal(samplePayload.data.test, true);
    assert.equal(await h.deliver(), 1);
    assert.equal(receiver.received.length, 1);
    const got = receiver.received[0]!;
    assert.equal(got.raw, JSON.stringify(samplePayload));
    assert.equal(got.headers.get("x-api-key"), "k");
    assert.equal(
      got.headers.get("x-service-webhook-event"),
      "message.received",
    );
    // A failed test is logged, never retried, and leaves the counters alone.
    h.clock.advance(24 * 3_600_000);
    assert.equal(await h.deliver(), 0);
    const log = await h.request(
      "GET",
      `/api/v2/webhooks/${hook.id}/deliveries`,
    );
    assert.equal(log.body.data.length, 1);
    assert.equal(log.body.data[0].status, "failed");
    assert.equal(log.body.data[0].statusCode, 500);
    assert.equal(log.body.data[0].kind, "test");
    assert.equal(log.body.data[0].nextAttemptAt, null);
    const after = (await h.request("GET", `/api/v2/webhooks/${hook.id}`)).body
      .data;
    assert.equal(after.consecutiveFailures, 0);
    assert.equal(after.lastDeliveryAt, null);
    assert.equal(after.lastDeliveryStatus, null);
  },
);

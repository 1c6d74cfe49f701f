import assert from "node:assert/strict";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";
import {
  startWebhookReceiver,
  type WebhookReceiver,
} from "../../src/simulator/webhook_receiver.ts";
import { createGraphClient } from "../../src/upstream/graph_client.ts";
import { waitFor } from "../_support/wait.ts";

const SECRET = "sim-secret";
const AUTH = { phoneNumberId: "106540352242922", accessToken: "tok" };
const TO = "5491122334455";

// deno-lint-ignore no-explicit-any
type Json = any;

async function withPeers(
  fn: (sim: Simulator, rx: WebhookReceiver) => Promise<void>,
  opts: { callbackMode?: "timers" | "queued" } = {},
): Promise<void> {
  const rx = startWebhookReceiver({ appSecret: SECRET });
  const sim = await startSimulator({
    port: 0,
    appSecret: SECRET,
    callbackUrl: rx.url,
    statusDelaysMs: { sent: 5, delivered: 10, read: 15 },
    retryDelaysMs: [10, 20, 40],
    ...opts,
  });
  try {
    await fn(sim, rx);
  } finally {
    await sim.stop();
    await rx.stop();
  }
}

async function behave(sim: Simulator, patch: unknown): Promise<void> {
  const res = await fetch(`${sim.url}/_sim/behaviour`, {
    method: "POST",
    body: JSON.stringify(patch),
  });
  assert.equal(res.status, 200, await res.text());
}

function send(sim: Simulator, extra: Record<string, unknown> = {}) {
  return createGraphClient({ baseUrl: sim.graphUrl }).sendMessage(AUTH, {
    to: TO,
    type: "text",
    text: { body: "Hola" },
    ...extra,
  });
}

function statusesOf(rx: WebhookReceiver, wamid: string): Json[] {
  return rx.statuses().filter((s: Json) => s.id === wamid);
}

async function waitStatuses(
  rx: WebhookReceiver,
  wamid: string,
  count: number,
): Promise<Json[]> {
  await waitFor(() => statusesOf(rx, wamid).length >= count, {
    what: `${count} statuses of ${wamid}`,
  });
  return statusesOf(rx, wamid);
}

Deno.test("status callbacks arrive signed as sent, delivered, read with the opaque data echoed", async () => {
  await withPeers(async (sim, rx) => {
    const reg = await fetch(`${sim.url}/_sim/numbers`, {
      method: "POST",
      body: JSON.stringify({
        phoneNumberId: AUTH.phoneNumberId,
        displayPhoneNumber: "+1 555 010 0001",
        wabaId: "777",
      }),
    });
    assert.equal(reg.status, 200, await reg.text());
    const { wamid } = await send(sim, { biz_opaque_callback_data: "msg-1" });
    const got = await waitStatuses(rx, wamid, 3);
    assert.deepEqual(got.map((s: Json) => s.status), [
      "sent",
      "delivered",
      "read",
    ]);
    for (const s of got) {
      assert.equal(s.biz_opaque_callback_data, "msg-1");
      assert.equal(s.recipient_id, TO);
      assert.match(s.timestamp, /^\d{10}$/);
      assert.equal(s.errors, undefined);
    }
    assert.equal(got[0].pricing.pricing_model, "PMP");
    assert.equal(typeof got[0].conversation.id, "string");
    assert.equal(got[2].pricing, undefined);
    const body = rx.received[0]!.body;
    assert.equal(body.object, "whatsapp_business_account");
    assert.equal(body.entry[0].id, "777");
    assert.equal(body.entry[0].changes[0].field, "messages");
    assert.deepEqual(body.entry[0].changes[0].value.metadata, {
      display_phone_number: "15550100001",
      phone_number_id: AUTH.phoneNumberId,
    });
    assert.equal(body.entry[0].changes[0].value.contacts, undefined);
    assert.equal(rx.attempts, 3, "no callback was rejected or repeated");
  });
});

Deno.test("status callbacks escape non-ASCII opaque data before signing", async () => {
  await withPeers(async (sim, rx) => {
    const { wamid } = await send(sim, { biz_opaque_callback_data: "ñandú 👋" });
    await waitFor(() => statusesOf(rx, wamid).length === 3);
    for (const w of rx.received) assert.ok(!/[^\0-~]/.test(w.raw), w.raw);
    assert.ok(rx.received[0]!.raw.includes("\\u00f1and\\u00fa \\ud83d\\udc4b"));
    assert.equal(statusesOf(rx, wamid)[0].biz_opaque_callback_data, "ñandú 👋");
  });
});

Deno.test("an async failNext 131047 produces a failed status with its error", async () => {
  await withPeers(async (sim, rx) => {
    await behave(sim, { failNext: [{ code: 131047, mode: "async" }] });
    const { wamid } = await send(sim, { biz_opaque_callback_data: "m-2" });
    const [failed] = await waitStatuses(rx, wamid, 1);
    assert.equal(failed.status, "failed");
    assert.equal(failed.biz_opaque_callback_data, "m-2");
    assert.equal(failed.errors[0].code, 131047);
    assert.equal(failed.errors[0].title, "Re-engagement message");
    assert.match(failed.errors[0].error_data.details, /24 hours/);
    assert.equal(failed.conversation, undefined);
    assert.equal(failed.pricing, undefined);
    // The failure was used up: the next send is delivered normally.
    const next = await send(sim);
    await waitFor(() => statusesOf(rx, next.wamid).length === 3);
    await waitFor(() => sim.state.tasks.size === 0);
    assert.equal(statusesOf(rx, wamid).length, 1);
  });
});

Deno.test("duplicateRate sends every status callback twice", async () => {
  await withPeers(async (sim, rx) => {
    await behave(sim, { duplicateRate: 1 });
    const { wamid } = await send(sim);
    const got = await waitStatuses(rx, wamid, 6);
    assert.deepEqual(got.map((s: Json) => s.status), [
      "sent",
      "sent",
      "delivered",
      "delivered",
      "read",
      "read",
    ]);
    // The simulator records a callback once its answer is back, after the receiver saw it.
    await waitFor(() => sim.state.callbacks.length >= 6, {
      what: "six recorded callbacks",
    });
    const dups = sim.state.callbacks.filter((c) => c.duplicate);
    assert.equal(dups.length, 3);
  });
});

Deno.test("reorderRate delivers read before delivered", async () => {
  await withPeers(async (sim, rx) => {
    await behave(sim, { reorderRate: 1 });
    const { wamid } = await send(sim);
    const got = await waitStatuses(rx, wamid, 3);
    assert.deepEqual(got.map((s: Json) => s.status), [
      "sent",
      "read",
      "delivered",
    ]);
  });
});

Deno.test("stopAfter delivered emits no read", async () => {
  await withPeers(async (sim, rx) => {
    await behave(sim, { stopAfter: "delivered" });
    const { wamid } = await send(sim);
    await waitFor(() => statusesOf(rx, wamid).length === 2);
    await waitFor(() => sim.state.tasks.size === 0, { what: "idle simulator" });
    assert.deepEqual(statusesOf(rx, wamid).map((s: Json) => s.status), [
      "sent",
      "delivered",
    ]);
  });
});

/** "sent" was refused twice and accepted on the third attempt; then delivered and read arrived. */
function assertSentOnThirdAttempt(
  sim: Simulator,
  rx: WebhookReceiver,
  wamid: string,
): void {
  const sent = sim.state.callbacks.filter((c) =>
    c.wamid === wamid && c.status === "sent"
  );
  assert.deepEqual(sent.map((c) => [c.attempt, c.httpStatus]), [
    [1, 500],
    [2, 500],
    [3, 200],
  ]);
  assert.deepEqual(statusesOf(rx, wamid).map((s: Json) => s.status), [
    "sent",
    "delivered",
    "read",
  ]);
}

Deno.test("a callback the receiver fails is retried until it is accepted", async () => {
  await withPeers(async (sim, rx) => {
    rx.failNext(2);
    const { wamid } = await send(sim);
    await waitFor(() => statusesOf(rx, wamid).length === 3);
    // The simulator records a callback once its answer is back, after the receiver saw it.
    await waitFor(() => sim.state.callbacks.length >= 5, {
      what: "five recorded callbacks",
    });
    assertSentOnThirdAttempt(sim, rx, wamid);
    const res = await fetch(`${sim.url}/_sim/callbacks`);
    const { callbacks } = await res.json();
    assert.equal(callbacks.length, 5);
  });
});

Deno.test("a callback signed with another secret is rejected by the receiver", async () => {
  const rx = startWebhookReceiver({ appSecret: "the-real-secret" });
  const sim = await startSimulator({
    port: 0,
    appSecret: "a-wrong-secret",
    callbackUrl: rx.url,
    statusDelaysMs: { sent: 1, delivered: 2, read: 3 },
    retryDelaysMs: [],
  });
  try {
    await send(sim);
    await waitFor(() => sim.state.callbacks.length === 3);
    assert.deepEqual(sim.state.callbacks.map((c) => c.httpStatus), [
      401,
      401,
      401,
    ]);
    assert.equal(rx.received.length, 0);
  } finally {
    await sim.stop();
    await rx.stop();
  }
});

Deno.test("GET /_sim/messages counts sends per biz_opaque_callback_data", async () => {
  await withPeers(async (sim) => {
    await send(sim, { biz_opaque_callback_data: "a" });
    await send(sim, { biz_opaque_callback_data: "a" });
    await send(sim, { biz_opaque_callback_data: "b" });
    await send(sim);
    const res = await fetch(`${sim.url}/_sim/messages`);
    const body = await res.json();
    assert.equal(body.messages.length, 4);
    assert.deepEqual(body.countsByOpaque, { a: 2, b: 1 });
    assert.equal(body.duplicates, 1);
    assert.equal(body.messages[0].bizOpaque, "a");
    assert.equal(body.messages[3].bizOpaque, null);
  });
});

const QUEUED = { callbackMode: "queued" as const };

Deno.test("in queued mode status callbacks wait for flush(), which posts them in order", async () => {
  await withPeers(async (sim, rx) => {
    const { wamid } = await send(sim, { biz_opaque_callback_data: "q-1" });
    const other = await send(sim);
    assert.equal(sim.state.tasks.size, 0, "no timer was started");
    assert.equal(rx.attempts, 0);
    assert.equal(await sim.flush(), 6);
    // flush() resolves after every answer: nothing left to wait for.
    assert.deepEqual(statusesOf(rx, wamid).map((s: Json) => s.status), [
      "sent",
      "delivered",
      "read",
    ]);
    assert.equal(statusesOf(rx, wamid)[0].biz_opaque_callback_data, "q-1");
    assert.equal(statusesOf(rx, other.wamid).length, 3);
    assert.equal(sim.state.callbacks.length, 6);
    assert.equal(await sim.flush(), 0, "nothing is queued twice");
  }, QUEUED);
});

Deno.test("in queued mode a failed callback is retried within the same flush", async () => {
  await withPeers(async (sim, rx) => {
    rx.failNext(2);
    const { wamid } = await send(sim);
    assert.equal(await sim.flush(), 5);
    assertSentOnThirdAttempt(sim, rx, wamid);
  }, QUEUED);
});

Deno.test("in queued mode a callback is given up after the retry schedule", async () => {
  await withPeers(async (sim, rx) => {
    rx.failNext(100);
    const { wamid } = await send(sim);
    // 1 attempt + 3 retries for "sent"; then the next statuses as the timers would.
    assert.equal(await sim.flush(), 12);
    const sent = sim.state.callbacks.filter((c) =>
      c.wamid === wamid && c.status === "sent"
    );
    assert.deepEqual(sent.map((c) => c.attempt), [1, 2, 3, 4]);
    assert.equal(statusesOf(rx, wamid).length, 0);
  }, QUEUED);
});

Deno.test("in queued mode duplicates and reordering keep their order", async () => {
  await withPeers(async (sim, rx) => {
    await behave(sim, { duplicateRate: 1, reorderRate: 1 });
    const { wamid } = await send(sim);
    assert.equal(await sim.flush(), 6);
    assert.deepEqual(statusesOf(rx, wamid).map((s: Json) => s.status), [
      "sent",
      "sent",
      "read",
      "read",
      "delivered",
      "delivered",
    ]);
    assert.equal(sim.state.callbacks.filter((c) => c.duplicate).length, 3);
  }, QUEUED);
});

Deno.test("in queued mode a reset drops the queued callbacks", async () => {
  await withPeers(async (sim, rx) => {
    await send(sim);
    const res = await fetch(`${sim.url}/_sim/reset`, { method: "POST" });
    await res.body?.cancel();
    assert.equal(await sim.flush(), 0);
    assert.equal(rx.attempts, 0);
  }, QUEUED);
});

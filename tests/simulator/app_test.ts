import assert from "node:assert/strict";
import type { Hono } from "hono";
import { createSimulatorApp } from "../../src/simulator/app.ts";
import {
  createSimulatorState,
  settleSimulator,
  type SimulatorState,
} from "../../src/simulator/state.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const PN = "106540352242922";
const TEXT = { to: "5491122334455", type: "text", text: { body: "Hola" } };

async function withApp(
  fn: (call: Call, state: SimulatorState) => Promise<void>,
  opts: { throughputPerSecond?: number } = {},
): Promise<void> {
  const state = createSimulatorState({ appSecret: "x", ...opts });
  const app: Hono = createSimulatorApp(state);
  const call: Call = async (method, path, body, headers = {}) => {
    const res = await app.request(path, {
      method,
      headers: { Authorization: "Bearer tok", ...headers },
      body: body === undefined
        ? undefined
        : typeof body === "string"
        ? body
        : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: Json = text;
    try {
      parsed = JSON.parse(text);
    } catch { /* not JSON */ }
    return { status: res.status, body: parsed };
  };
  try {
    await fn(call, state);
  } finally {
    await settleSimulator(state);
  }
}

type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: Json }>;

function send(
  call: Call,
  message: Record<string, unknown>,
  path = `/v22.0/${PN}/messages`,
) {
  return call("POST", path, { messaging_product: "whatsapp", ...message });
}

Deno.test("POST /messages answers the Cloud API success shape under any version prefix", async () => {
  await withApp(async (call) => {
    for (
      const path of [
        `/v22.0/${PN}/messages`,
        `/v19.0/${PN}/messages`,
        `/${PN}/messages`,
      ]
    ) {
      const res = await send(call, { ...TEXT, to: "+5491122334455" }, path);
      assert.equal(res.status, 200, path);
      assert.deepEqual(res.body, {
        messaging_product: "whatsapp",
        contacts: [{ input: "+5491122334455", wa_id: "5491122334455" }],
        messages: [{ id: res.body.messages[0].id }],
      });
      assert.match(res.body.messages[0].id, /^wamid\.[A-Za-z0-9_-]{40}$/);
    }
  });
});

Deno.test("POST /messages without a bearer token is 401 code 190", async () => {
  await withApp(async (call) => {
    const res = await call("POST", `/v22.0/${PN}/messages`, {
      messaging_product: "whatsapp",
      ...TEXT,
    }, { Authorization: "" });
    assert.equal(res.status, 401);
    assert.equal(res.body.error.code, 190);
    assert.equal(res.body.error.type, "OAuthException");
    assert.equal(typeof res.body.error.fbtrace_id, "string");
  });
});

Deno.test("POST /messages rejects invalid sends with Graph error codes", async () => {
  await withApp(async (call, state) => {
    const cases: [Record<string, unknown>, number][] = [
      [{ ...TEXT, messaging_product: "sms" }, 100],
      [{ ...TEXT, to: "not-a-phone" }, 131009],
      [{ type: "text", text: { body: "x" } }, 131008],
      [{ ...TEXT, type: "carrier_pigeon" }, 131051],
      [{ ...TEXT, text: { body: "x".repeat(4097) } }, 100],
      [{ ...TEXT, text: {} }, 131008],
      [{ to: TEXT.to, type: "image" }, 131008],
      [{
        to: TEXT.to,
        type: "image",
        image: { id: "1", link: "https://x/a.jpg" },
      }, 100],
      [{ to: TEXT.to, type: "image", image: {} }, 100],
      [{ to: TEXT.to, type: "audio", audio: { id: "1", caption: "no" } }, 100],
      [{ to: TEXT.to, type: "template", template: { name: "t" } }, 131008],
      [{ to: TEXT.to, type: "reaction", reaction: { emoji: "👍" } }, 131008],
      [{ to: TEXT.to, type: "location", location: { latitude: "1" } }, 131008],
      [{
        to: TEXT.to,
        type: "interactive",
        interactive: {
          type: "button",
          body: { text: "?" },
          action: {
            buttons: [1, 2, 3, 4].map((i) => ({
              type: "reply",
              reply: { id: `${i}`, title: `B${i}` },
            })),
          },
        },
      }, 100],
      [{ ...TEXT, biz_opaque_callback_data: "x".repeat(513) }, 100],
    ];
    for (const [message, code] of cases) {
      const res = await call("POST", `/v22.0/${PN}/messages`, {
        messaging_product: "whatsapp",
        ...message,
      });
      assert.equal(res.status, 400, JSON.stringify(message).slice(0, 80));
      assert.equal(
        res.body.error.code,
        code,
        JSON.stringify(message).slice(0, 80),
      );
      assert.equal(typeof res.body.error.error_data.details, "string");
    }
    assert.equal(state.sends.length, 0);
    const accepted = await send(call, {
      ...TEXT,
      text: { body: "x".repeat(4096) },
    });
    assert.equal(accepted.status, 200);
  });
});

Deno.test("POST /messages answers 130429 with the reference wording past the throughput", async () => {
  await withApp(async (call) => {
    const statuses: number[] = [];
    let throttled: Json;
    for (let i = 0; i < 4; i++) {
      const res = await send(call, TEXT);
      statuses.push(res.status);
      if (res.status !== 200) throttled = res.body;
    }
    assert.deepEqual(statuses.slice(0, 2), [200, 200]);
    assert.ok(statuses.includes(400));
    assert.deepEqual(
      { ...throttled.error, fbtrace_id: "-" },
      {
        message: "(#130429) Rate limit hit",
        type: "OAuthException",
        code: 130429,
        error_subcode: 2494055,
        error_data: {
          messaging_product: "whatsapp",
          details:
            "Message failed to send because there were too many messages sent from this phone number in a short period of time",
        },
        fbtrace_id: "-",
      },
    );
    // Another business number has its own bucket.
    const other = await send(call, TEXT, "/v22.0/999/messages");
    assert.equal(other.status, 200);
  }, { throughputPerSecond: 2 });
});

Deno.test("failNext applies to the matching recipient for its count", async () => {
  await withApp(async (call, state) => {
    const set = await call("POST", "/_sim/behaviour", {
      failNext: [{
        code: 131026,
        mode: "sync",
        count: 2,
        to: "+5491100000000",
      }],
    });
    assert.equal(set.status, 200);
    assert.equal((await send(call, TEXT)).status, 200);
    const first = await send(call, { ...TEXT, to: "5491100000000" });
    assert.equal(first.body.error.code, 131026);
    assert.equal(
      (await send(call, { ...TEXT, to: "5491100000000" })).status,
      400,
    );
    assert.equal(
      (await send(call, { ...TEXT, to: "5491100000000" })).status,
      200,
    );
    assert.equal(state.behaviour.failNext.length, 0);
    await call("POST", "/_sim/behaviour", {
      failNext: [{ code: 190, mode: "sync" }],
    });
    assert.equal((await send(call, TEXT)).status, 401);
    await call("POST", "/_sim/behaviour", {
      failNext: [{ code: 133004, mode: "sync" }],
    });
    assert.equal((await send(call, TEXT)).status, 503);
  });
});

Deno.test("POST /messages with status read records a read receipt", async () => {
  await withApp(async (call, state) => {
    const ok = await send(call, {
      status: "read",
      message_id: "wamid.in",
      typing_indicator: { type: "text" },
    });
    assert.deepEqual(ok.body, { success: true });
    const bad = await send(call, { status: "unread", message_id: "wamid.in" });
    assert.equal(bad.body.error.code, 100);
    const missing = await send(call, { status: "read" });
    assert.equal(missing.body.error.code, 131008);
    assert.deepEqual(
      state.reads.map((r) => [r.messageId, r.typing]),
      [["wamid.in", true]],
    );
  });
});

Deno.test("/_sim/behaviour updates partially, validates, and reset restores it", async () => {
  await withApp(async (call, state) => {
    const initial = (await call("GET", "/_sim/behaviour")).body;
    assert.deepEqual(initial.delaysMs, { sent: 50, delivered: 150, read: 300 });
    const updated = await call("POST", "/_sim/behaviour", {
      delaysMs: { read: 900 },
      duplicateRate: 0.5,
    });
    assert.deepEqual(updated.body.delaysMs, {
      sent: 50,
      delivered: 150,
      read: 900,
    });
    assert.equal(updated.body.duplicateRate, 0.5);
    assert.equal(updated.body.reorderRate, 0);
    assert.equal(
      (await call("POST", "/_sim/behaviour", { duplicateRate: 2 })).status,
      400,
    );
    assert.equal(
      (await call("POST", "/_sim/behaviour", { bogus: true })).status,
      400,
    );
    assert.equal((await call("POST", "/_sim/behaviour", "{")).status, 400);
    await send(call, TEXT);
    assert.equal(state.sends.length, 1);
    assert.equal((await call("POST", "/_sim/reset")).status, 200);
    assert.deepEqual((await call("GET", "/_sim/behaviour")).body, initial);
    assert.deepEqual((await call("GET", "/_sim/messages")).body, {
      messages: [],
      countsByOpaque: {},
      duplicates: 0,
    });
  });
});

Deno.test("media endpoints need a bearer token and the URL's token", async () => {
  await withApp(async (call, state) => {
    state.media.set("123", {
      id: "123",
      bytes: new Uint8Array([1, 2, 3]),
      mimeType: "image/png",
      sha256: "abc",
      token: "t0k",
    });
    const info = await call("GET", "/v22.0/123");
    assert.equal(info.status, 200);
    assert.equal(info.body.url, `${state.url}/_media/123?token=t0k`);
    assert.equal(info.body.file_size, "3");
    assert.equal(
      (await call("GET", "/v22.0/123", undefined, { Authorization: "" }))
        .status,
      401,
    );
    const unknown = await call("GET", "/v22.0/456");
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body.error.code, 100);
    assert.equal(unknown.body.error.error_subcode, 33);
    assert.equal((await call("GET", "/_media/123?token=t0k")).status, 200);
    assert.equal((await call("GET", "/_media/123?token=nope")).status, 404);
    assert.equal(
      (await call("GET", "/_media/123?token=t0k", undefined, {
        Authorization: "",
      })).status,
      401,
    );
  });
});

Deno.test("POST /_sim/callback-url changes where callbacks go", async () => {
  await withApp(async (call, state) => {
    const res = await call("POST", "/_sim/callback-url", {
      url: "http://127.0.0.1:9/meta/webhook",
    });
    assert.equal(res.status, 200);
    assert.equal(state.callbackUrl, "http://127.0.0.1:9/meta/webhook");
    assert.equal(
      (await call("POST", "/_sim/callback-url", { url: "ftp://x" })).status,
      400,
    );
    assert.deepEqual((await call("GET", "/_sim/callback-url")).body, {
      url: "http://127.0.0.1:9/meta/webhook",
    });
  });
});

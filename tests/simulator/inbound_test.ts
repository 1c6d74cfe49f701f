import assert from "node:assert/strict";
import { sha256Hex } from "../../src/crypto.ts";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";
import {
  startWebhookReceiver,
  type WebhookReceiver,
} from "../../src/simulator/webhook_receiver.ts";
import { verifyMetaSignature } from "../../src/upstream/meta_signature.ts";

const SECRET = "sim-secret";
const PHONE_NUMBER_ID = "106540352242922";
const TEXT = "¡Hola! 👋 ñandú";

async function withPeers(
  fn: (sim: Simulator, rx: WebhookReceiver) => Promise<void>,
): Promise<void> {
  const rx = startWebhookReceiver({ appSecret: SECRET });
  const sim = await startSimulator({
    port: 0,
    appSecret: SECRET,
    callbackUrl: rx.url,
    retryDelaysMs: [10, 20],
  });
  try {
    const res = await fetch(`${sim.url}/_sim/numbers`, {
      method: "POST",
      body: JSON.stringify({
        phoneNumberId: PHONE_NUMBER_ID,
        displayPhoneNumber: "+15550100001",
        wabaId: "102290129340398",
      }),
    });
    await res.body?.cancel();
    await fn(sim, rx);
  } finally {
    await sim.stop();
    await rx.stop();
  }
}

async function inbound(
  sim: Simulator,
  body: Record<string, unknown>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${sim.url}/_sim/inbound`, {
    method: "POST",
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

Deno.test("POST /_sim/inbound delivers a signed text webhook with the Meta envelope", async () => {
  await withPeers(async (sim, rx) => {
    const res = await inbound(sim, {
      to: "+15550100001",
      from: "+5491122334455",
      name: "Ana Pérez",
      type: "text",
      text: { body: TEXT },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(rx.received.length, 1);
    const hook = rx.received[0]!;
    // Escaped before signing, and the signature holds over the raw bytes.
    assert.ok(!/[^\0-~]/.test(hook.raw));
    assert.ok(
      hook.raw.includes("\\u00a1Hola! \\ud83d\\udc4b \\u00f1and\\u00fa"),
    );
    assert.equal(
      await verifyMetaSignature(
        SECRET,
        new TextEncoder().encode(hook.raw),
        hook.signature,
      ),
      true,
    );
    assert.deepEqual(hook.body, {
      object: "whatsapp_business_account",
      entry: [{
        id: "102290129340398",
        changes: [{
          field: "messages",
          value: {
            messaging_product: "whatsapp",
            metadata: {
              display_phone_number: "15550100001",
              phone_number_id: PHONE_NUMBER_ID,
            },
            contacts: [{
              profile: { name: "Ana Pérez" },
              wa_id: "5491122334455",
            }],
            messages: [{
              from: "5491122334455",
              id: res.body.wamid,
              timestamp: hook.body.entry[0].changes[0].value.messages[0]
                .timestamp,
              type: "text",
              text: { body: TEXT },
            }],
          },
        }],
      }],
    });
    const message = rx.messages()[0];
    assert.match(message.id, /^wamid\./);
    assert.ok(Math.abs(Number(message.timestamp) - Date.now() / 1000) < 60);
  });
});

Deno.test("POST /_sim/inbound stores image bytes and references them in the webhook", async () => {
  await withPeers(async (sim, rx) => {
    const bytes = crypto.getRandomValues(new Uint8Array(512));
    const res = await inbound(sim, {
      to: PHONE_NUMBER_ID,
      from: "5491122334455",
      type: "image",
      image: {
        mimeType: "image/jpeg",
        dataBase64: btoa(String.fromCharCode(...bytes)),
        caption: "Mirá",
      },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const message = rx.messages()[0];
    assert.equal(message.type, "image");
    assert.deepEqual(message.image, {
      id: res.body.mediaId,
      mime_type: "image/jpeg",
      sha256: await sha256Hex(bytes),
      caption: "Mirá",
    });
    assert.match(message.image.id, /^\d+$/);
    const info = await fetch(`${sim.graphUrl}/${message.image.id}`, {
      headers: { Authorization: "Bearer tok" },
    }).then((r) => r.json());
    const download = await fetch(info.url, {
      headers: { Authorization: "Bearer tok" },
    });
    assert.deepEqual(new Uint8Array(await download.arrayBuffer()), bytes);
  });
});

Deno.test("POST /_sim/inbound passes interactive replies and context through", async () => {
  await withPeers(async (sim, rx) => {
    const res = await inbound(sim, {
      to: PHONE_NUMBER_ID,
      from: "+5491122334455",
      type: "interactive",
      interactive: {
        type: "button_reply",
        button_reply: { id: "yes", title: "Yes" },
      },
      context: { from: "15550100001", id: "wamid.ours" },
      timestamp: 1700000000,
      id: "wamid.fixed",
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.wamid, "wamid.fixed");
    const message = rx.messages()[0];
    assert.deepEqual(message, {
      from: "5491122334455",
      id: "wamid.fixed",
      timestamp: "1700000000",
      type: "interactive",
      context: { from: "15550100001", id: "wamid.ours" },
      interactive: {
        type: "button_reply",
        button_reply: { id: "yes", title: "Yes" },
      },
    });
  });
});

Deno.test("POST /_sim/inbound answers 502 when the callback URL rejects it", async () => {
  await withPeers(async (sim, rx) => {
    rx.failNext(1);
    const res = await inbound(sim, {
      to: PHONE_NUMBER_ID,
      from: "+5491122334455",
      type: "text",
      text: { body: "hi" },
    });
    assert.equal(res.status, 502);
    assert.equal(
      (res.body.error as { httpStatus: number }).httpStatus,
      500,
    );
    assert.equal(rx.received.length, 0);
  });
});

Deno.test("POST /_sim/inbound with retry waits until the callback URL accepts it", async () => {
  await withPeers(async (sim, rx) => {
    rx.failNext(2);
    const res = await inbound(sim, {
      to: PHONE_NUMBER_ID,
      from: "+5491122334455",
      type: "text",
      text: { body: "hi" },
      retry: true,
    });
    assert.equal(res.status, 200);
    assert.equal(rx.attempts, 3);
    assert.equal(rx.messages()[0].id, res.body.wamid);
  });
});

Deno.test("POST /_sim/inbound rejects an unknown business number and bad input", async () => {
  await withPeers(async (sim, rx) => {
    const unknown = await inbound(sim, {
      to: "+15559999999",
      from: "+5491122334455",
      type: "text",
      text: { body: "hi" },
    });
    assert.equal(unknown.status, 404);
    const missing = await inbound(sim, {
      to: PHONE_NUMBER_ID,
      from: "+5491122334455",
      type: "image",
    });
    assert.equal(missing.status, 400);
    const extra = await inbound(sim, {
      to: PHONE_NUMBER_ID,
      from: "+5491122334455",
      type: "text",
      text: { body: "hi" },
      colour: "red",
    });
    assert.equal(extra.status, 400);
    assert.equal(rx.attempts, 0);
  });
});

Deno.test("POST /_sim/inbound sends a username user, a reply, a forward, an ad, an edit, a revoke and an app echo in Meta's shapes", async () => {
  await withPeers(async (sim, rx) => {
    const userId = "US.13491208655302741918";
    const cases: [
      Record<string, unknown>,
      // deno-lint-ignore no-explicit-any
      (value: Record<string, any>) => void,
    ][] = [
      [
        { userId, username: "sofi.cafe", type: "text", text: { body: "a" } },
        (v) => {
          const [contact] = v.contacts;
          assert.deepEqual(contact, {
            profile: { name: "Customer", username: "sofi.cafe" },
            user_id: userId,
          });
          assert.equal(v.messages[0].from, undefined, "no phone");
          assert.equal(v.messages[0].from_user_id, userId);
        },
      ],
      [{
        from: "+5491122334455",
        type: "text",
        text: { body: "b" },
        context: { from: "15550100001", id: "wamid.q" },
        forwarded: true,
        referral: { source_type: "ad", ctwa_clid: "clid" },
      }, (v) => {
        assert.deepEqual(v.messages[0].context, {
          from: "15550100001",
          id: "wamid.q",
          forwarded: true,
        });
        assert.deepEqual(v.messages[0].referral, {
          source_type: "ad",
          ctwa_clid: "clid",
        });
      }],
      [{
        from: "+5491122334455",
        type: "edit",
        edit: { originalId: "wamid.o", text: "c" },
      }, (v) => {
        assert.deepEqual(v.messages[0].edit, {
          original_message_id: "wamid.o",
          message: { type: "text", text: { body: "c" } },
        });
      }],
      [{
        from: "+5491122334455",
        type: "revoke",
        revoke: { originalId: "wamid.o" },
      }, (v) => {
        assert.deepEqual(v.messages[0].revoke, {
          original_message_id: "wamid.o",
        });
      }],
      [{
        from: "+5491122334455",
        type: "text",
        text: { body: "d" },
        echo: true,
      }, (v) => {
        assert.equal(v.messages, undefined);
        assert.equal(v.contacts, undefined);
        assert.equal(v.message_echoes[0].from, "15550100001");
        assert.equal(v.message_echoes[0].to, "5491122334455");
      }],
    ];
    for (const [i, [input, check]] of cases.entries()) {
      const res = await inbound(sim, { to: "+15550100001", ...input });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      // deno-lint-ignore no-explicit-any
      const change = (rx.received[i]!.body as any).entry[0].changes[0];
      assert.equal(
        change.field,
        input.echo ? "smb_message_echoes" : "messages",
      );
      check(change.value);
    }
    const neither = await inbound(sim, {
      to: "+15550100001",
      type: "text",
      text: { body: "?" },
    });
    assert.equal(neither.status, 400);
  });
});

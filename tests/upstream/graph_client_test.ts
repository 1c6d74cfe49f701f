import assert from "node:assert/strict";
import { sha256Hex } from "../../src/crypto.ts";
import { type GraphAuth, UpstreamError } from "../../src/upstream/graph_api.ts";
import { createGraphClient } from "../../src/upstream/graph_client.ts";
import { EgressClient } from "../../src/egress/http_client.ts";
import { type Simulator, startSimulator } from "../../src/simulator/server.ts";
import { startWebhookReceiver } from "../../src/simulator/webhook_receiver.ts";
import { freePort } from "../_support/wait.ts";
import { rejection } from "./_rejection.ts";

const AUTH: GraphAuth = {
  phoneNumberId: "106540352242922",
  accessToken: "tok",
};
const TO = "5491122334455";

async function withSim(
  fn: (sim: Simulator) => Promise<void>,
  opts: { throughputPerSecond?: number } = {},
): Promise<void> {
  const sim = await startSimulator({ port: 0, appSecret: "s3cret", ...opts });
  try {
    await fn(sim);
  } finally {
    await sim.stop();
  }
}

async function behave(sim: Simulator, patch: unknown): Promise<void> {
  const res = await fetch(`${sim.url}/_sim/behaviour`, {
    method: "POST",
    body: JSON.stringify(patch),
  });
  assert.equal(res.status, 200, await res.text());
}

const MESSAGES: Record<string, Record<string, unknown>> = {
  text: { type: "text", text: { body: "Hola" } },
  "image by link": {
    type: "image",
    image: { link: "https://example.com/a.jpg", caption: "A" },
  },
  "image by id": { type: "image", image: { id: "1234567890" } },
  video: { type: "video", video: { link: "https://example.com/v.mp4" } },
  audio: { type: "audio", audio: { id: "555" } },
  document: {
    type: "document",
    document: { link: "https://example.com/x.pdf", filename: "x.pdf" },
  },
  template: {
    type: "template",
    template: {
      name: "order_update",
      language: { code: "es_AR" },
      components: [{
        type: "body",
        parameters: [{ type: "text", text: "123" }],
      }],
    },
  },
  "interactive button": {
    type: "interactive",
    interactive: {
      type: "button",
      body: { text: "Confirm?" },
      action: {
        buttons: [
          { type: "reply", reply: { id: "yes", title: "Yes" } },
          { type: "reply", reply: { id: "no", title: "No" } },
        ],
      },
    },
  },
  "interactive list": {
    type: "interactive",
    interactive: {
      type: "list",
      body: { text: "Pick one" },
      action: {
        button: "Options",
        sections: [{ rows: [{ id: "r1", title: "Row 1" }] }],
      },
    },
  },
  reaction: {
    type: "reaction",
    reaction: { message_id: "wamid.abc", emoji: "👍" },
  },
};

Deno.test("sendMessage returns a wamid for every message type", async () => {
  await withSim(async (sim) => {
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    const wamids = new Set<string>();
    for (const [name, message] of Object.entries(MESSAGES)) {
      const res = await client.sendMessage(AUTH, { to: TO, ...message });
      assert.match(res.wamid, /^wamid\.[A-Za-z0-9_-]+$/, name);
      assert.equal(res.waId, TO, name);
      wamids.add(res.wamid);
    }
    assert.equal(wamids.size, Object.keys(MESSAGES).length);
    const sent = sim.state.sends;
    assert.deepEqual(
      sent.map((s) => s.type),
      Object.values(MESSAGES).map((m) => m.type),
    );
    assert.equal(sent[0]!.body.messaging_product, "whatsapp");
    assert.equal(sent[0]!.phoneNumberId, AUTH.phoneNumberId);
  });
});

Deno.test("sendMessage reports message_status on template sends", async () => {
  await withSim(async (sim) => {
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    const tpl = await client.sendMessage(AUTH, {
      to: TO,
      ...MESSAGES.template,
    });
    assert.equal(tpl.messageStatus, "accepted");
    const text = await client.sendMessage(AUTH, { to: TO, ...MESSAGES.text });
    assert.equal(text.messageStatus, null);
  });
});

Deno.test("sendMessage classifies 130429 as throttled and retryable", async () => {
  await withSim(async (sim) => {
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    const results = await Promise.allSettled(
      Array.from(
        { length: 20 },
        () => client.sendMessage(AUTH, { to: TO, ...MESSAGES.text }),
      ),
    );
    const failures = results.filter((r) => r.status === "rejected");
    assert.ok(failures.length > 0, "expected some sends to be throttled");
    assert.ok(results.some((r) => r.status === "fulfilled"));
    const err = (failures[0] as PromiseRejectedResult).reason;
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.upstreamCode, 130429);
    assert.equal(err.category, "throttled_throughput");
    assert.equal(err.httpStatus, 400);
    assert.equal(err.throttled, true);
    assert.equal(err.retryable, true);
    assert.equal(err.retryAfterMs, 250);
    assert.equal(err.code, "UPSTREAM_ERROR");
    assert.equal(
      err.message,
      "Graph API rejected the message: (#130429) Rate limit hit",
    );
  }, { throughputPerSecond: 5 });
});

Deno.test("sendMessage classifies a sync 132001 as permanent template_not_found", async () => {
  await withSim(async (sim) => {
    await behave(sim, { failNext: [{ code: 132001, mode: "sync" }] });
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    const err = await rejection(
      client.sendMessage(AUTH, { to: TO, ...MESSAGES.template }),
    );
    assert.equal(err.upstreamCode, 132001);
    assert.equal(err.httpStatus, 404);
    assert.equal(err.category, "template_not_found");
    assert.equal(err.retryable, false);
    assert.equal(err.throttled, false);
    assert.equal(
      err.message,
      "Graph API rejected the message: (#132001) Template name does not exist in the translation",
    );
    // The rule was used up: the next send succeeds.
    const ok = await client.sendMessage(AUTH, { to: TO, ...MESSAGES.template });
    assert.ok(ok.wamid);
  });
});

Deno.test("sendMessage reports unknown templates with their details", async () => {
  await withSim(async (sim) => {
    await behave(sim, { unknownTemplates: ["order_update"] });
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    const err = await rejection(
      client.sendMessage(AUTH, { to: TO, ...MESSAGES.template }),
    );
    assert.equal(err.category, "template_not_found");
    assert.deepEqual(
      (err.details as { details: string }).details,
      "template name (order_update) does not exist in es_AR",
    );
  });
});

Deno.test("sendMessage classifies 190 as auth_invalid", async () => {
  await withSim(async (sim) => {
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    await behave(sim, { failNext: [{ code: 190, mode: "sync" }] });
    const injected = await rejection(
      client.sendMessage(AUTH, { to: TO, ...MESSAGES.text }),
    );
    assert.equal(injected.httpStatus, 401);
    assert.equal(injected.category, "auth_invalid");
    assert.equal(injected.retryable, false);
    const noToken = await rejection(
      client.sendMessage({ ...AUTH, accessToken: "" }, {
        to: TO,
        ...MESSAGES.text,
      }),
    );
    assert.equal(noToken.upstreamCode, 190);
    assert.equal(noToken.category, "auth_invalid");
  });
});

Deno.test("sendMessage maps a network failure to a retryable network error", async () => {
  const client = createGraphClient({
    baseUrl: `http://127.0.0.1:${freePort()}/v22.0`,
  });
  const err = await rejection(
    client.sendMessage(AUTH, { to: TO, ...MESSAGES.text }),
  );
  assert.equal(err.category, "network");
  assert.equal(err.retryable, true);
  assert.equal(err.code, "UPSTREAM_UNAVAILABLE");
  assert.equal(err.upstreamCode, null);
});

Deno.test("sendMessage times out as a retryable network error", async () => {
  await withSim(async (sim) => {
    await behave(sim, { latencyMs: 5_000 });
    const client = createGraphClient({ baseUrl: sim.graphUrl, timeoutMs: 50 });
    const err = await rejection(
      client.sendMessage(AUTH, { to: TO, ...MESSAGES.text }),
    );
    assert.equal(err.category, "network");
    assert.equal(err.retryable, true);
    assert.equal(err.message, "Graph API did not answer within 50 ms");
  });
});

Deno.test("markRead records read receipts and typing indicators", async () => {
  await withSim(async (sim) => {
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    await client.markRead(AUTH, "wamid.in1");
    await client.markRead(AUTH, "wamid.in2", { typing: true });
    const res = await fetch(`${sim.url}/_sim/reads`);
    const { reads } = await res.json();
    assert.deepEqual(
      reads.map((
        r: Record<string, unknown>,
      ) => [r.phoneNumberId, r.messageId, r.typing]),
      [[AUTH.phoneNumberId, "wamid.in1", false], [
        AUTH.phoneNumberId,
        "wamid.in2",
        true,
      ]],
    );
    assert.equal(sim.state.sends.length, 0);
  });
});

/** A customer sends an image through the simulator; returns its media id. */
async function inboundImage(
  sim: Simulator,
  bytes: Uint8Array,
): Promise<string> {
  const receiver = startWebhookReceiver({ appSecret: "s3cret" });
  try {
    sim.setCallbackUrl(receiver.url);
    const res = await fetch(`${sim.url}/_sim/inbound`, {
      method: "POST",
      body: JSON.stringify({
        to: AUTH.phoneNumberId,
        from: "+" + TO,
        type: "image",
        image: {
          mimeType: "image/png",
          dataBase64: btoa(String.fromCharCode(...bytes)),
        },
      }),
    });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(receiver.messages()[0].image.id, body.mediaId);
    return body.mediaId;
  } finally {
    await receiver.stop();
  }
}

/** A client whose media downloads may reach the simulator on 127.0.0.1 (closed by the caller). */
function mediaClient(sim: Simulator) {
  const egress = new EgressClient({ allowPrivate: true, allowHttp: true });
  const client = createGraphClient({
    baseUrl: sim.graphUrl,
    media: { egress, hosts: ["127.0.0.1"] },
  });
  return { client, [Symbol.dispose]: () => egress.close() };
}

Deno.test("getMediaInfo and downloadMedia round-trip the bytes", async () => {
  await withSim(async (sim) => {
    const bytes = crypto.getRandomValues(new Uint8Array(3000));
    const mediaId = await inboundImage(sim, bytes);
    using media = mediaClient(sim);
    const info = await media.client.getMediaInfo(AUTH, mediaId);
    assert.equal(info.mimeType, "image/png");
    assert.equal(info.fileSize, 3000);
    assert.equal(info.sha256, await sha256Hex(bytes));
    const chunks: Uint8Array<ArrayBuffer>[] = [];
    const got = await media.client.downloadMedia(AUTH, info.url, {
      maxBytes: 3000,
      write: (chunk) => Promise.resolve(void chunks.push(chunk.slice())),
    });
    assert.equal(got.contentType, "image/png");
    const received = new Uint8Array(await new Blob(chunks).arrayBuffer());
    assert.equal(await sha256Hex(received), info.sha256);
    assert.deepEqual(received, bytes);
  });
});

Deno.test("downloadMedia rejects media above maxBytes", async () => {
  await withSim(async (sim) => {
    const mediaId = await inboundImage(sim, new Uint8Array(2048));
    using media = mediaClient(sim);
    const info = await media.client.getMediaInfo(AUTH, mediaId);
    const err = await rejection(
      media.client.downloadMedia(AUTH, info.url, {
        maxBytes: 2047,
        write: () => Promise.resolve(),
      }),
    );
    assert.equal(err.category, "media_too_large");
    assert.equal(err.retryable, false);
  });
});

Deno.test("downloadMedia refuses the simulator's URL unless its host is a media host", async () => {
  await withSim(async (sim) => {
    const mediaId = await inboundImage(sim, new Uint8Array(64));
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    const info = await client.getMediaInfo(AUTH, mediaId);
    const err = await rejection(
      client.downloadMedia(AUTH, info.url, {
        maxBytes: 1024,
        write: () => Promise.resolve(),
      }),
    );
    assert.equal(err.category, "media_host_not_allowed");
    assert.match(err.message, /"127\.0\.0\.1": it is not a media host/);
  });
});

Deno.test("getMediaInfo rejects an unknown media id with code 100", async () => {
  await withSim(async (sim) => {
    const client = createGraphClient({ baseUrl: sim.graphUrl });
    const err = await rejection(client.getMediaInfo(AUTH, "999"));
    assert.equal(err.upstreamCode, 100);
    assert.equal(err.category, "invalid_request");
    assert.equal((err.details as { subcode: number }).subcode, 33);
  });
});

Deno.test("uploadMedia posts a multipart form and answers Meta's media id; a type Meta refuses is media_rejected", async () => {
  await withSim(async (sim) => {
    const graph = createGraphClient({ baseUrl: sim.graphUrl });
    const bytes = new TextEncoder().encode("%PDF-1.4 a small document");
    const { id } = await graph.uploadMedia(AUTH, {
      data: new Blob([bytes]),
      mimeType: "application/pdf",
      fileName: "invoice.pdf",
    });
    const stored = sim.state.media.get(id)!;
    assert.equal(stored.mimeType, "application/pdf");
    assert.deepEqual(stored.bytes, bytes);
    // The same file as a type Meta does not take: refused synchronously.
    const err = await rejection(
      graph.uploadMedia(AUTH, {
        data: new Blob([bytes]),
        mimeType: "image/gif",
        fileName: "a.gif",
      }),
    );
    assert.ok(err instanceof UpstreamError);
    assert.equal(err.category, "media_rejected");
    assert.equal(err.upstreamCode, 131053);
    assert.equal(err.retryable, false);
  });
});

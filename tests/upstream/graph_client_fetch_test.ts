import assert from "node:assert/strict";
import type { GraphAuth } from "../../src/upstream/graph_api.ts";
import { createGraphClient } from "../../src/upstream/graph_client.ts";
import { rejection } from "./_rejection.ts";

const AUTH: GraphAuth = {
  phoneNumberId: "106540352242922",
  accessToken: "tok",
};
const TO = "5491122334455";

Deno.test("getMediaInfo accepts file_size as a number or a string", async () => {
  for (const fileSize of [42, "42"]) {
    const fakeFetch: typeof fetch = () =>
      Promise.resolve(Response.json({
        messaging_product: "whatsapp",
        url: "https://lookaside.test/m",
        mime_type: "image/jpeg",
        sha256: "ab",
        file_size: fileSize,
        id: "1",
      }));
    const client = createGraphClient({
      baseUrl: "http://graph.test/v22.0",
      fetch: fakeFetch,
    });
    const info = await client.getMediaInfo(AUTH, "1");
    assert.equal(info.fileSize, 42);
  }
});

Deno.test("the client sends bearer auth and JSON to the configured base URL", async () => {
  const seen: Request[] = [];
  const fakeFetch: typeof fetch = (input, init) => {
    seen.push(new Request(input, init));
    return Promise.resolve(Response.json({
      messaging_product: "whatsapp",
      contacts: [{ input: TO, wa_id: TO }],
      messages: [{ id: "wamid.X" }],
    }));
  };
  const client = createGraphClient({
    baseUrl: "https://graph.test/v22.0/",
    fetch: fakeFetch,
  });
  await client.sendMessage(AUTH, {
    to: TO,
    type: "text",
    text: { body: "Hola" },
    biz_opaque_callback_data: "m1",
  });
  const req = seen[0]!;
  assert.equal(
    req.url,
    `https://graph.test/v22.0/${AUTH.phoneNumberId}/messages`,
  );
  assert.equal(req.headers.get("authorization"), "Bearer tok");
  assert.equal(req.headers.get("content-type"), "application/json");
  assert.deepEqual(await req.json(), {
    messaging_product: "whatsapp",
    to: TO,
    type: "text",
    text: { body: "Hola" },
    biz_opaque_callback_data: "m1",
  });
});

Deno.test("sendMessage stops when the caller aborts, as a retryable network error", async () => {
  const fakeFetch: typeof fetch = (_input, init) =>
    new Promise((_resolve, reject) => {
      init?.signal?.addEventListener(
        "abort",
        () => reject(init.signal!.reason),
      );
    });
  const client = createGraphClient({
    baseUrl: "http://graph.test/v22.0",
    fetch: fakeFetch,
  });
  const controller = new AbortController();
  const pending = client.sendMessage(AUTH, {
    to: TO,
    type: "text",
    text: { body: "Hola" },
  }, { signal: controller.signal });
  controller.abort();
  const err = await rejection(pending);
  assert.equal(err.category, "network");
  assert.equal(err.retryable, true);
  assert.equal(err.message, "Graph API call was aborted");
});

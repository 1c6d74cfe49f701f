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

Deno.test("a call's timeout ends with the call: the signal fetch was given never fires after the answer", async () => {
  const signals: AbortSignal[] = [];
  const fakeFetch: typeof fetch = (_input, init) => {
    signals.push(init!.signal!);
    return Promise.resolve(Response.json({
      messaging_product: "whatsapp",
      messages: [{ id: "wamid.1" }],
    }));
  };
  const client = createGraphClient({
    baseUrl: "http://graph.test/v22.0",
    fetch: fakeFetch,
    timeoutMs: 1,
  });
  const caller = new AbortController();
  await client.sendMessage(AUTH, {
    to: TO,
    type: "text",
    text: { body: "Hola" },
  }, { signal: caller.signal });
  await client.markRead(AUTH, "wamid.1");
  // Timers fire in deadline order: a 1 ms timeout left running has fired
  // before this 5 ms one (AbortSignal.timeout's did, holding the finished
  // call's objects until then).
  await new Promise((resolve) => setTimeout(resolve, 5));
  caller.abort();
  assert.equal(signals.length, 2);
  assert.deepEqual(signals.map((s) => s.aborted), [false, false]);
});

/** Values JSON.stringify throws on: TypeError (BigInt, cycle) and RangeError (as a stack overflow does). */
function unserializable(): unknown[] {
  const cycle: Record<string, unknown> = {};
  cycle.self = cycle;
  const overflow = {
    toJSON() {
      throw new RangeError("Maximum call stack size exceeded");
    },
  };
  return [10n, cycle, overflow];
}

/** A client whose fetch only counts calls (a local error must come before any). */
function countingClient() {
  let calls = 0;
  const client = createGraphClient({
    baseUrl: "http://graph.test/v22.0",
    fetch: () => {
      calls++;
      return Promise.resolve(Response.json({}));
    },
  });
  return { client, calls: () => calls };
}

Deno.test("sendMessage reports a body it cannot serialize as a permanent local error, without calling fetch", async () => {
  const { client, calls } = countingClient();
  for (const bad of unserializable()) {
    const err = await rejection(client.sendMessage(AUTH, {
      to: TO,
      type: "interactive",
      interactive: { data: bad },
    }));
    assert.equal(err.category, "local_error");
    assert.equal(err.retryable, false);
    assert.equal(err.code, "UPSTREAM_ERROR");
    assert.match(err.message, /^Cannot build the message for the Graph API: /);
    assert.doesNotMatch(err.message, /Cannot reach/);
  }
  assert.equal(calls(), 0);
});

Deno.test("an exception fetch throws is a network error only when it is fetch's network TypeError", async () => {
  const cases: [Error, string, boolean][] = [
    [
      new TypeError("error sending request: Connection refused (os error 111)"),
      "network",
      true,
    ],
    [new RangeError("Invalid array length"), "local_error", false],
    [new Error("a bug in a fetch wrapper"), "local_error", false],
  ];
  for (const [thrown, category, retryable] of cases) {
    const client = createGraphClient({
      baseUrl: "http://graph.test/v22.0",
      fetch: () => Promise.reject(thrown),
    });
    const err = await rejection(
      client.sendMessage(AUTH, { to: TO, type: "text", text: { body: "x" } }),
    );
    assert.equal(err.category, category, thrown.message);
    assert.equal(err.retryable, retryable, thrown.message);
  }
});

Deno.test("an access token that cannot be a header value is a permanent local error", async () => {
  const { client, calls } = countingClient();
  const err = await rejection(client.markRead(
    { ...AUTH, accessToken: "tok\nInjected: yes" },
    "wamid.X",
  ));
  assert.equal(err.category, "local_error");
  assert.equal(err.retryable, false);
  assert.match(err.message, /^Cannot build the read receipt for the Graph API/);
  assert.equal(calls(), 0);
});

import assert from "node:assert/strict";
import { EgressClient } from "../../src/egress/http_client.ts";
import { blackhole, drip, raw, stall } from "../_support/fault_server.ts";
import { waitFor } from "../_support/wait.ts";
import { assertOnTime, failure, rig, timedFailure, TLS } from "./_client.ts";

const TIMEOUT_MS = 300;

Deno.test("a black hole server times out at the deadline", async () => {
  await using t = await rig();
  t.server.script(blackhole());
  const { err, ms } = await timedFailure(() =>
    t.client.request({
      method: "POST",
      url: t.server.url(),
      headers: [],
      timeoutMs: TIMEOUT_MS,
    })
  );
  assert.equal(err.kind, "timeout");
  assert.equal(err.message, `No complete response within ${TIMEOUT_MS} ms`);
  assertOnTime(ms, TIMEOUT_MS);
  assert.equal(t.server.requests.length, 1, "the request was written");
  await waitFor(() => t.server.open === 0, { what: "the client to hang up" });
});

Deno.test("a body dripping at 1 byte/s times out at the deadline", async () => {
  await using t = await rig();
  t.server.script(drip(1, 100));
  const { err, ms } = await timedFailure(() =>
    t.client.request({
      method: "GET",
      url: t.server.url(),
      headers: [],
      timeoutMs: TIMEOUT_MS,
    })
  );
  assert.equal(err.kind, "timeout");
  assertOnTime(ms, TIMEOUT_MS);
  await waitFor(() => t.server.open === 0, { what: "the client to hang up" });
});

Deno.test("a head that never ends times out at the deadline", async () => {
  await using t = await rig();
  t.server.script(raw("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"));
  const { err, ms } = await timedFailure(() =>
    t.client.request({
      method: "GET",
      url: t.server.url(),
      headers: [],
      timeoutMs: TIMEOUT_MS,
    })
  );
  assert.equal(err.kind, "timeout");
  assertOnTime(ms, TIMEOUT_MS);
  await waitFor(() => t.server.open === 0, { what: "the client to hang up" });
});

Deno.test("a TLS handshake that is never answered times out at the deadline", async () => {
  await using t = await rig({ client: { caCerts: [TLS.ca] } });
  t.server.script(stall());
  const { err, ms } = await timedFailure(() =>
    t.client.request({
      method: "GET",
      url: `https://127.0.0.1:${t.server.port}/`,
      headers: [],
      timeoutMs: TIMEOUT_MS,
    })
  );
  assert.equal(err.kind, "timeout");
  assertOnTime(ms, TIMEOUT_MS);
  assert.equal(t.server.connections, 1);
});

Deno.test("a resolver that hangs times out at the deadline", async () => {
  const client = new EgressClient({
    allowPrivate: false,
    allowHttp: false,
    resolver: () => new Promise(() => {}),
  });
  try {
    const { err, ms } = await timedFailure(() =>
      client.request({
        method: "GET",
        url: "https://hooks.test/",
        headers: [],
        timeoutMs: TIMEOUT_MS,
      })
    );
    assert.equal(err.kind, "timeout");
    assertOnTime(ms, TIMEOUT_MS);
  } finally {
    client.close();
  }
});

Deno.test("an aborted signal ends the request as a timeout", async () => {
  await using t = await rig();
  t.server.script(blackhole());
  const controller = new AbortController();
  const pending = t.client.request({
    method: "POST",
    url: t.server.url(),
    headers: [],
    timeoutMs: 10_000,
    signal: controller.signal,
  });
  await waitFor(() => t.server.requests.length === 1, { what: "the request" });
  controller.abort();
  const err = await failure(pending);
  assert.equal(err.kind, "timeout");
  assert.equal(err.message, "Request was aborted before a complete response");
  const early = await failure(
    t.client.request({
      method: "GET",
      url: t.server.url(),
      headers: [],
      timeoutMs: 1000,
      signal: controller.signal,
    }),
  );
  assert.equal(early.kind, "timeout");
  assert.equal(t.server.connections, 1, "an aborted signal does not dial");
});

import assert from "node:assert/strict";
import { EgressClient } from "../../src/egress/http_client.ts";
import { hangup, raw, reset, respond } from "../_support/fault_server.ts";
import { freePort } from "../_support/wait.ts";
import { failure, post, rig } from "./_client.ts";

Deno.test("a reset or a hang-up mid-exchange is a network error", async () => {
  await using t = await rig();
  t.server.script(
    reset(),
    hangup(),
    respond(200, {
      headers: [["Content-Length", "10"]],
      body: "short",
      close: true,
    }),
  );
  const req = post(t);
  const reseted = await failure(t.client.request(req));
  assert.equal(reseted.kind, "network");
  assert.equal(reseted.message, "Connection reset by peer");
  const hungUp = await failure(t.client.request(req));
  assert.deepEqual([hungUp.kind, hungUp.message], [
    "network",
    "Connection closed before a complete response",
  ]);
  // The third response promises 10 bytes, sends 5, then the server closes.
  const short = await failure(t.client.request(req));
  assert.deepEqual([short.kind, short.message], [
    "network",
    "Connection closed before a complete response",
  ]);
  assert.equal(
    t.server.requests.length,
    2,
    "reset() acts before reading the request",
  );
});

Deno.test("a refused connection is a connect error", async () => {
  const client = new EgressClient({ allowPrivate: true, allowHttp: true });
  const port = freePort();
  try {
    const err = await failure(
      client.request({
        method: "GET",
        url: `http://127.0.0.1:${port}/`,
        headers: [],
        timeoutMs: 2000,
      }),
    );
    assert.equal(err.kind, "connect");
    assert.equal(
      err.message,
      `Cannot connect to "127.0.0.1:${port}": connection refused`,
    );
  } finally {
    client.close();
  }
});

Deno.test("the next resolved address is tried when one refuses", async () => {
  await using t = await rig({
    client: { resolver: () => Promise.resolve(["127.0.0.2", "127.0.0.1"]) },
  });
  const res = await t.client.request({
    method: "GET",
    url: `http://hooks.test:${t.server.port}/`,
    headers: [],
    timeoutMs: 2000,
  });
  assert.equal(res.address, "127.0.0.1");
  assert.equal(
    t.server.requests[0]!.headers[0]![1],
    `hooks.test:${t.server.port}`,
  );
});

Deno.test("malformed responses are protocol errors", async () => {
  const bad = [
    "HTTP/1.1 2000 OK\r\n\r\n",
    "HTTP/2 200 OK\r\n\r\n",
    "ICY 200 OK\r\n\r\n",
    "HTTP/1.1 200 OK\r\nX-A: 1\r\n folded\r\n\r\n",
    "HTTP/1.1 200 OK\r\nBad Name: 1\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nabc",
    "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
    "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabc\r\n0\r\n\r\n",
    `HTTP/1.1 200 OK\r\n${"X-Big: " + "a".repeat(40_000)}\r\n\r\n`,
  ];
  await using t = await rig();
  for (const response of bad) {
    t.server.script(raw(response, { close: true }));
    const err = await failure(
      t.client.request({
        method: "GET",
        url: t.server.url(),
        headers: [],
        timeoutMs: 2000,
      }),
    );
    assert.equal(
      err.kind,
      "protocol",
      `${JSON.stringify(response.slice(0, 60))}: ${err.message}`,
    );
  }
  t.server.script(
    raw("HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc"),
  );
  const same = await t.client.request({
    method: "GET",
    url: t.server.url(),
    headers: [],
    timeoutMs: 2000,
  });
  assert.equal(
    same.excerpt,
    "abc",
    "repeated identical Content-Length is fine",
  );
});

Deno.test("oversized response headers are a protocol error naming the limit", async () => {
  await using t = await rig();
  const many = Array.from(
    { length: 2000 },
    (_, i) => `X-H${i}: ${"v".repeat(20)}\r\n`,
  ).join("");
  t.server.script(raw(`HTTP/1.1 200 OK\r\n${many}\r\n`));
  const err = await failure(
    t.client.request({
      method: "GET",
      url: t.server.url(),
      headers: [],
      timeoutMs: 2000,
    }),
  );
  assert.deepEqual([err.kind, err.message], [
    "protocol",
    "Response headers exceed 32768 bytes",
  ]);
});

Deno.test("unsafe request headers are refused before any connection", async () => {
  await using t = await rig();
  const cases: Array<[string, string]> = [
    ["X-A", "1\r\nInjected: yes"],
    ["X-A", "1\nInjected: yes"],
    ["X-A", "nul\0"],
    ["X A", "1"],
    ["X-A:", "1"],
    ["", "1"],
    ["Host", "evil.test"],
    ["content-length", "5"],
    ["Transfer-Encoding", "chunked"],
  ];
  for (const header of cases) {
    const err = await failure(
      t.client.request({
        method: "POST",
        url: t.server.url(),
        headers: [header],
        timeoutMs: 2000,
      }),
    );
    assert.equal(err.kind, "protocol", JSON.stringify(header));
  }
  assert.equal(t.server.connections, 0);
  await t.client.request({
    method: "POST",
    url: t.server.url(),
    headers: [["X-A", "1"]],
    timeoutMs: 2000,
  });
  assert.equal(
    t.server.connections,
    1,
    "the same client does connect when headers are fine",
  );
});

import assert from "node:assert/strict";
import { interim, raw, respond } from "../_support/fault_server.ts";
import { decode, failure, post, rig, text } from "./_client.ts";

Deno.test("request reads a Content-Length response", async () => {
  await using t = await rig();
  t.server.script(
    respond(201, { headers: [["X-Id", "7"], ["X-Id", "8"]], body: "created" }),
  );
  const res = await t.client.request({
    method: "POST",
    url: t.server.url("/hook"),
    headers: [],
    body: text("{}"),
    timeoutMs: 2000,
  });
  assert.equal(res.status, 201);
  assert.equal(res.excerpt, "created");
  assert.equal(res.bodyBytes, 7);
  assert.equal(res.truncated, false);
  assert.equal(res.headers.get("x-id"), "7, 8");
  assert.equal(res.address, "127.0.0.1");
  assert.equal(res.reused, false);
  assert.ok(res.durationMs >= 0);
});

Deno.test("request sends exactly the expected bytes", async () => {
  await using t = await rig();
  const port = t.server.port;
  await t.client.request({
    method: "POST",
    url: `http://127.0.0.1:${port}/hooks/in?x=1&y=%20#fragment`,
    headers: [["Content-Type", "application/json"], [
      "X-Signature",
      "sha256=ab",
    ], [
      "x-lower",
      "v",
    ]],
    body: text('{"a":1}'),
    timeoutMs: 2000,
  });
  await t.client.request({
    method: "GET",
    url: t.server.url(),
    headers: [],
    timeoutMs: 2000,
  });
  await t.client.request({
    method: "POST",
    url: t.server.url("/empty"),
    headers: [],
    timeoutMs: 2000,
  });
  assert.deepEqual(t.server.requests.map((r) => decode(r.raw)), [
    `POST /hooks/in?x=1&y=%20 HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
    "Content-Type: application/json\r\nX-Signature: sha256=ab\r\nx-lower: v\r\n" +
    'Content-Length: 7\r\n\r\n{"a":1}',
    `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
    `POST /empty HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Length: 0\r\n\r\n`,
  ]);
  assert.equal(t.server.requests[0]!.method, "POST");
  assert.equal(decode(t.server.requests[0]!.body), '{"a":1}');
});

Deno.test("request decodes a chunked body with extensions and trailers", async () => {
  await using t = await rig();
  t.server.script(
    respond(200, { body: "hello chunked world", chunked: true }),
    raw(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n" +
        "5;name=value\r\nhello\r\n6 ; x\r\n world\r\nA\r\n0123456789\r\n" +
        "0\r\nX-Trailer: yes\r\n\r\n",
    ),
  );
  const req = {
    method: "GET" as const,
    url: t.server.url(),
    headers: [],
    timeoutMs: 2000,
  };
  const first = await t.client.request(req);
  assert.equal(first.excerpt, "hello chunked world");
  const second = await t.client.request(req);
  assert.equal(second.excerpt, "hello world0123456789");
  assert.equal(second.bodyBytes, 21);
  assert.equal(
    second.reused,
    true,
    "a fully read chunked response keeps the socket",
  );
  assert.equal(t.server.connections, 1);
});

Deno.test("the excerpt keeps exactly the first excerptBytes of a body read in many small pieces", async () => {
  await using t = await rig();
  const text = Array.from({ length: 120 }, (_, i) => `piece ${i};`).join("");
  const chunks = text.match(/.{1,37}/g)!;
  t.server.script(
    raw(
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" +
        chunks.map((c) => `${c.length.toString(16)}\r\n${c}\r\n`).join("") +
        "0\r\n\r\n",
    ),
    respond(200, { body: text }),
  );
  const req = {
    method: "GET" as const,
    url: t.server.url(),
    headers: [],
    timeoutMs: 2000,
  };
  const chunked = await t.client.request(req);
  assert.equal(chunked.bodyBytes, text.length);
  assert.equal(chunked.excerpt, text.slice(0, 1024));
  const small = await t.client.request({ ...req, excerptBytes: 100 });
  assert.equal(small.excerpt, text.slice(0, 100));
  assert.equal(small.bodyBytes, text.length);
});

Deno.test("request reads a body without framing until EOF and does not reuse it", async () => {
  await using t = await rig();
  t.server.script(
    raw("HTTP/1.1 200 OK\r\nX-A: b\r\n\r\nuntil the end", { close: true }),
  );
  const req = {
    method: "GET" as const,
    url: t.server.url(),
    headers: [],
    timeoutMs: 2000,
  };
  const res = await t.client.request(req);
  assert.equal(res.excerpt, "until the end");
  assert.equal(res.truncated, false);
  const next = await t.client.request(req);
  assert.equal(next.reused, false);
  assert.equal(t.server.connections, 2);
});

Deno.test("request skips 1xx interim responses", async () => {
  await using t = await rig();
  t.server.script(
    interim(100),
    interim(103, [["Link", "</a.css>; rel=preload"]]),
    respond(200, { body: "final" }),
  );
  const res = await t.client.request({
    method: "POST",
    url: t.server.url(),
    headers: [],
    body: text("x"),
    timeoutMs: 2000,
  });
  assert.equal(res.status, 200);
  assert.equal(res.excerpt, "final");
  assert.equal(res.headers.get("link"), null);
});

Deno.test("a 204 has no body and keeps the connection", async () => {
  await using t = await rig();
  t.server.script(
    respond(204, { headers: [["X-Done", "1"]] }),
    respond(200, { body: "next" }),
  );
  const req = post(t);
  const first = await t.client.request(req);
  assert.deepEqual([first.status, first.bodyBytes, first.excerpt], [
    204,
    0,
    "",
  ]);
  const second = await t.client.request(req);
  assert.equal(second.excerpt, "next");
  assert.equal(second.reused, true);
});

Deno.test("request stops reading at maxBodyBytes and closes the socket", async () => {
  await using t = await rig();
  const body = "é".repeat(100_000);
  t.server.script(
    respond(200, { body }),
    respond(200, { body, chunked: true }),
  );
  const req = {
    method: "GET" as const,
    url: t.server.url(),
    headers: [],
    timeoutMs: 5000,
    maxBodyBytes: 1000,
    excerptBytes: 3,
  };
  const res = await t.client.request(req);
  assert.equal(res.status, 200);
  assert.equal(res.bodyBytes, 1000);
  assert.equal(res.truncated, true);
  assert.equal(res.excerpt, "é\uFFFD", "excerpt is decoded lossily");
  const chunked = await t.client.request(req);
  assert.equal(chunked.reused, false, "a truncated response is not reused");
  assert.equal(chunked.bodyBytes, 1000);
  assert.equal(t.server.connections, 2);
});

Deno.test("onBody gets every body byte in order, in any framing, up to maxBodyBytes", async () => {
  await using t = await rig();
  const body = "0123456789".repeat(10_000);
  t.server.script(
    respond(200, { body }),
    respond(200, { body, chunked: true }),
    raw(`HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n${body}`, { close: true }),
    respond(200, { body }),
    respond(404, { body: "missing" }),
  );
  const get = async (maxBodyBytes = 200_000) => {
    const parts: string[] = [];
    const heads: number[] = [];
    const res = await t.client.request({
      ...post(t),
      method: "GET",
      maxBodyBytes,
      onBody: ({ status }) => {
        heads.push(status);
        if (status !== 200) return undefined;
        // The chunk is the connection's buffer: decode it before returning.
        return (chunk) => Promise.resolve(void parts.push(decode(chunk)));
      },
    });
    return { res, received: parts.join(""), heads };
  };
  for (const framing of ["length", "chunked", "eof"]) {
    const { res, received, heads } = await get();
    assert.deepEqual(heads, [200], framing);
    assert.equal(received, body, framing);
    assert.equal(res.bodyBytes, body.length, framing);
  }
  const cut = await get(1234);
  assert.equal(cut.received, body.slice(0, 1234));
  assert.equal(cut.res.truncated, true);
  const declined = await get();
  assert.deepEqual([declined.heads, declined.received], [[404], ""]);
  assert.equal(declined.res.excerpt, "missing", "the excerpt is still kept");
});

Deno.test("a body writer that throws ends the exchange as a network error with its cause", async () => {
  await using t = await rig();
  t.server.script(respond(200, { body: "x".repeat(50_000) }));
  const broke = new Error("disk full");
  const err = await failure(t.client.request({
    ...post(t),
    method: "GET",
    onBody: () => () => Promise.reject(broke),
  }));
  assert.equal(err.kind, "network");
  assert.equal(err.cause, broke);
});

import assert from "node:assert/strict";
import { raw, reset, respond } from "../_support/fault_server.ts";
import { waitFor } from "../_support/wait.ts";
import { failure, post, rig } from "./_client.ts";

Deno.test("keep-alive reuses the connection for the next request", async () => {
  await using t = await rig();
  const req = post(t);
  const first = await t.client.request(req);
  const second = await t.client.request(req);
  assert.deepEqual([first.reused, second.reused], [false, true]);
  assert.equal(t.server.connections, 1);
  assert.equal(t.server.requests.length, 2);
});

Deno.test("a socket the server closed while idle is replaced transparently", async () => {
  await using t = await rig();
  t.server.script(
    respond(200, { close: true }),
    respond(200, { body: "fresh" }),
  );
  const req = post(t);
  await t.client.request(req);
  await waitFor(() => t.server.open === 0, { what: "the server to close" });
  const res = await t.client.request(req);
  assert.equal(res.excerpt, "fresh");
  assert.equal(res.reused, false);
  assert.equal(t.server.connections, 2);
});

Deno.test("an idle socket the server writes to out of turn is dropped", async () => {
  // A long idle timeout, so only the watch on idle sockets can close it.
  await using t = await rig({ client: { idleTimeoutMs: 60_000 } });
  const req = post(t);
  await t.client.request(req);
  t.server.broadcast(
    "HTTP/1.1 408 Request Timeout\r\nContent-Length: 0\r\n\r\n",
  );
  await waitFor(() => t.server.open === 0, {
    what: "the client to drop the socket",
  });
  const res = await t.client.request(req);
  assert.deepEqual([res.status, res.reused], [200, false]);
  assert.equal(t.server.connections, 2);
});

Deno.test("a response followed by stray bytes is not reused", async () => {
  await using t = await rig();
  t.server.script(
    raw(
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 408 Request Timeout\r\n\r\n",
    ),
  );
  const req = post(t);
  assert.equal((await t.client.request(req)).excerpt, "ok");
  const next = await t.client.request(req);
  assert.deepEqual([next.status, next.reused], [200, false]);
});

Deno.test("a reused socket reset before any response byte is retried once", async () => {
  await using t = await rig();
  t.server.script(respond(200), reset(), respond(200, { body: "retried" }));
  const req = post(t);
  await t.client.request(req);
  const res = await t.client.request(req);
  assert.equal(res.excerpt, "retried");
  assert.equal(t.server.connections, 2);
});

Deno.test("a retried request that fails again is not retried twice", async () => {
  await using t = await rig();
  t.server.script(respond(200), reset(), reset(), respond(200));
  const req = post(t);
  await t.client.request(req);
  const err = await failure(t.client.request(req));
  assert.equal(err.kind, "network");
  assert.equal(t.server.connections, 2);
});

Deno.test("a reused socket that fails after response bytes is not retried", async () => {
  await using t = await rig();
  t.server.script(
    respond(200),
    raw("HTTP/1.1 200 OK\r\nContent-Le", { close: true }),
  );
  const req = post(t);
  await t.client.request(req);
  const err = await failure(t.client.request(req));
  assert.deepEqual([err.kind, err.message], [
    "network",
    "Connection closed before a complete response",
  ]);
  assert.equal(t.server.connections, 1, "no second connection");
});

Deno.test("Connection: close and HTTP/1.0 responses are not reused", async () => {
  await using t = await rig();
  t.server.script(
    respond(200, { headers: [["Connection", "close"]] }),
    raw("HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok"),
    respond(200),
  );
  const req = post(t);
  for (let i = 0; i < 3; i++) {
    assert.equal((await t.client.request(req)).reused, false, `request ${i}`);
  }
  assert.equal(t.server.connections, 3);
});

Deno.test("idle sockets close after idleTimeoutMs, and close() closes the rest", async () => {
  await using t = await rig({ client: { idleTimeoutMs: 50 } });
  const req = post(t);
  await t.client.request(req);
  assert.equal(t.server.open, 1);
  await waitFor(() => t.server.open === 0, {
    what: "the idle socket to close",
  });

  await using u = await rig();
  await u.client.request({ ...req, url: u.server.url() });
  assert.equal(u.server.open, 1);
  u.client.close();
  await waitFor(() => u.server.open === 0, { what: "close() to close it" });
});

Deno.test("the pool keeps at most maxIdlePerOrigin idle sockets", async () => {
  await using t = await rig({ client: { maxIdlePerOrigin: 1 } });
  const req = post(t);
  await Promise.all([t.client.request(req), t.client.request(req)]);
  assert.equal(t.server.connections, 2);
  await waitFor(() => t.server.open === 1, { what: "one idle socket" });
  assert.equal((await t.client.request(req)).reused, true);
  assert.equal(t.server.connections, 2);
});

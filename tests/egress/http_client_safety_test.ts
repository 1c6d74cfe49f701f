import assert from "node:assert/strict";
import { EgressClient } from "../../src/egress/http_client.ts";
import { checkUrl } from "../../src/egress/target.ts";
import { respond } from "../_support/fault_server.ts";
import { failure, rig, TLS } from "./_client.ts";

Deno.test("https verifies the certificate against the URL host, not the dialled IP", async () => {
  await using t = await rig({
    tls: true,
    client: {
      caCerts: [TLS.ca],
      resolver: () => Promise.resolve(["127.0.0.1"]),
    },
  });
  t.server.script(respond(200, { body: "secure" }));
  const byName = await t.client.request({
    method: "POST",
    url: `https://localhost:${t.server.port}/`,
    headers: [],
    timeoutMs: 3000,
  });
  assert.equal(byName.excerpt, "secure");
  const again = await t.client.request({
    method: "POST",
    url: `https://localhost:${t.server.port}/`,
    headers: [],
    timeoutMs: 3000,
  });
  assert.equal(again.reused, true);
  const byIp = await t.client.request({
    method: "POST",
    url: t.server.url(),
    headers: [],
    timeoutMs: 3000,
  });
  assert.equal(byIp.status, 200);
  assert.equal(
    byIp.reused,
    false,
    "a different servername is a different pool key",
  );

  const wrong = await failure(
    t.client.request({
      method: "GET",
      url: `https://wrong.test:${t.server.port}/`,
      headers: [],
      timeoutMs: 3000,
    }),
  );
  assert.equal(wrong.kind, "tls");
  assert.match(
    wrong.message,
    /^TLS handshake with "wrong\.test" at "127\.0\.0\.1:\d+" failed: .*not valid for name "wrong\.test"/,
  );

  const untrusted = new EgressClient({ allowPrivate: true, allowHttp: false });
  try {
    const err = await failure(
      untrusted.request({
        method: "GET",
        url: t.server.url(),
        headers: [],
        timeoutMs: 3000,
      }),
    );
    assert.equal(err.kind, "tls");
    assert.match(err.message, /UnknownIssuer/);
  } finally {
    untrusted.close();
  }
});

Deno.test("a blocked literal is refused without opening a socket", async () => {
  await using t = await rig({ client: { allowPrivate: false } });
  const err = await failure(
    t.client.request({
      method: "POST",
      url: t.server.url(),
      headers: [],
      timeoutMs: 2000,
    }),
  );
  assert.equal(err.kind, "blocked");
  assert.match(
    err.message,
    /"127\.0\.0\.1" is a loopback address \(set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true/,
  );
  assert.equal(t.server.connections, 0);
  const allowed = new EgressClient({ allowPrivate: true, allowHttp: true });
  try {
    await allowed.request({
      method: "POST",
      url: t.server.url(),
      headers: [],
      timeoutMs: 2000,
    });
  } finally {
    allowed.close();
  }
  assert.equal(
    t.server.connections,
    1,
    "control: the counter sees a real connection",
  );
});

Deno.test("DNS rebinding: a name checked as public but answering loopback at send time is blocked", async () => {
  let calls = 0;
  const resolver = () =>
    Promise.resolve(++calls === 1 ? ["93.184.215.14"] : ["127.0.0.1"]);
  await using t = await rig({ client: { allowPrivate: false, resolver } });
  const url = `http://rebind.test:${t.server.port}/hook`;
  await checkUrl(url, { allowHttp: true, allowPrivate: false, resolver });
  const err = await failure(
    t.client.request({ method: "POST", url, headers: [], timeoutMs: 2000 }),
  );
  assert.equal(err.kind, "blocked");
  assert.match(
    err.message,
    /"rebind\.test" resolves to a blocked address: "127\.0\.0\.1" is a loopback address/,
  );
  assert.equal(calls, 2);
  assert.equal(t.server.connections, 0);
});

Deno.test("only allowed addresses of a name are dialled", async () => {
  await using t = await rig({
    client: {
      resolver: () => Promise.resolve(["169.254.169.254", "127.0.0.1"]),
    },
  });
  const res = await t.client.request({
    method: "GET",
    url: `http://hooks.test:${t.server.port}/`,
    headers: [],
    timeoutMs: 2000,
  });
  assert.equal(res.address, "127.0.0.1");
});

Deno.test("resolver failures and empty answers are dns errors", async () => {
  for (
    const resolver of [
      () => Promise.reject(new Error("getaddrinfo ENOTFOUND")),
      () => Promise.resolve([]),
    ]
  ) {
    const client = new EgressClient({
      allowPrivate: false,
      allowHttp: false,
      resolver,
    });
    try {
      const err = await failure(
        client.request({
          method: "GET",
          url: "https://nowhere.test/",
          headers: [],
          timeoutMs: 2000,
        }),
      );
      assert.equal(err.kind, "dns");
      assert.match(err.message, /^Cannot resolve "nowhere\.test": ./);
    } finally {
      client.close();
    }
  }
});

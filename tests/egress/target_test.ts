import assert from "node:assert/strict";
import { EgressError } from "../../src/egress/errors.ts";
import { systemResolver } from "../../src/egress/resolver.ts";
import { checkUrl, parseTarget } from "../../src/egress/target.ts";

type Outcome = "ok" | "blocked" | "invalid_url";

/** [url, outcome with allowPrivate false, outcome with allowPrivate true]; allowHttp is true. */
const CASES: Array<[string, Outcome, Outcome]> = [
  ["https://hooks.example.com/x", "ok", "ok"],
  ["http://hooks.example.com/x", "ok", "ok"],
  ["https://8.8.8.8/", "ok", "ok"],
  ["https://[2606:4700::1111]/", "ok", "ok"],
  ["https://hooks.example.com:8443/x?y=1#frag", "ok", "ok"],
  ["https://HOOKS.Example.COM./", "ok", "ok"],
  ["https://xn--bcher-kva.example/", "ok", "ok"],
  ["https://bücher.example/", "ok", "ok"],
  ["https://172.15.255.255/", "ok", "ok"],
  ["https://100.63.255.255/", "ok", "ok"],
  // Odd IPv4 spellings, normalised by the URL parser before the check.
  ["http://2130706433/", "blocked", "ok"],
  ["http://0177.0.0.1/", "blocked", "ok"],
  ["http://0x7f.1/", "blocked", "ok"],
  ["http://127.1/", "blocked", "ok"],
  ["http://127.0.0.1./", "blocked", "ok"],
  ["http://0/", "blocked", "blocked"],
  ["http://0x0/", "blocked", "blocked"],
  ["http://0xa9fea9fe/", "blocked", "blocked"],
  ["http://10.1/", "blocked", "ok"],
  // IPv6 literals, including embedded IPv4.
  ["http://[::]/", "blocked", "blocked"],
  ["http://[::1]:8080/", "blocked", "ok"],
  ["http://[::ffff:169.254.169.254]/", "blocked", "blocked"],
  ["http://[0:0:0:0:0:ffff:7f00:1]/", "blocked", "ok"],
  ["http://[::ffff:7f00:1]/", "blocked", "ok"],
  ["http://[fe80::1]/", "blocked", "blocked"],
  ["http://[fd00:ec2::254]/", "blocked", "blocked"],
  ["http://[fc00::1]/", "blocked", "ok"],
  ["http://[2001:db8::1]/", "blocked", "blocked"],
  // Private and special IPv4 literals.
  ["https://10.0.0.1/hook", "blocked", "ok"],
  ["https://172.16.0.0/", "blocked", "ok"],
  ["https://192.168.1.1/", "blocked", "ok"],
  ["https://100.64.0.0/", "blocked", "ok"],
  ["https://169.254.169.254/latest/meta-data/", "blocked", "blocked"],
  ["https://100.100.100.200/", "blocked", "blocked"],
  ["https://224.0.0.1/", "blocked", "blocked"],
  ["https://255.255.255.255/", "blocked", "blocked"],
  // Names that are special without DNS.
  ["http://localhost/", "blocked", "ok"],
  ["http://localhost./", "blocked", "ok"],
  ["http://LOCALHOST:3000/", "blocked", "ok"],
  ["http://a.localhost/", "blocked", "ok"],
  ["http://metadata.google.internal/computeMetadata/v1/", "blocked", "blocked"],
  ["http://metadata/", "blocked", "blocked"],
  ["http://instance-data/", "blocked", "blocked"],
  ["http://metadata.azure.internal/", "blocked", "blocked"],
  // Not usable URLs.
  ["https://user:pass@hooks.example.com/", "invalid_url", "invalid_url"],
  ["https://user@hooks.example.com/", "invalid_url", "invalid_url"],
  ["ftp://hooks.example.com/", "invalid_url", "invalid_url"],
  ["file:///etc/passwd", "invalid_url", "invalid_url"],
  ["javascript:alert(1)", "invalid_url", "invalid_url"],
  ["data:text/plain,hi", "invalid_url", "invalid_url"],
  ["gopher://hooks.example.com/", "invalid_url", "invalid_url"],
  ["hooks.example.com/x", "invalid_url", "invalid_url"],
  ["/relative", "invalid_url", "invalid_url"],
  ["https://", "invalid_url", "invalid_url"],
  ["https://hooks.example.com:0/", "invalid_url", "invalid_url"],
  ["https://hooks.example.com:99999/", "invalid_url", "invalid_url"],
  [
    `https://hooks.example.com/${"a".repeat(2048)}`,
    "invalid_url",
    "invalid_url",
  ],
];

function outcome(raw: string, allowPrivate: boolean): Outcome {
  try {
    parseTarget(raw, { allowHttp: true, allowPrivate });
    return "ok";
  } catch (err) {
    assert.ok(err instanceof EgressError, `${raw}: ${err}`);
    assert.notEqual(err.message, "");
    return err.kind as Outcome;
  }
}

Deno.test("parseTarget accepts or refuses each URL with and without allowPrivate", () => {
  assert.ok(CASES.length >= 50, `only ${CASES.length} cases`);
  const wrong: string[] = [];
  for (const [raw, strict, relaxed] of CASES) {
    for (const [allowPrivate, want] of [[false, strict], [true, relaxed]]) {
      const got = outcome(raw, allowPrivate as boolean);
      if (got !== want) {
        wrong.push(
          `${
            raw.slice(0, 60)
          } (allowPrivate ${allowPrivate}): ${got}, want ${want}`,
        );
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("parseTarget normalises host, port and literal IP", () => {
  const rules = { allowHttp: true, allowPrivate: true };
  const name = parseTarget("https://HOOKS.Example.COM./x#f", rules);
  assert.equal(name.host, "hooks.example.com");
  assert.equal(name.port, 443);
  assert.equal(name.tls, true);
  assert.equal(name.literalIp, null);
  const v4 = parseTarget("http://0x7f.1:8080/", rules);
  assert.deepEqual([v4.host, v4.port, v4.tls, v4.literalIp], [
    "127.0.0.1",
    8080,
    false,
    "127.0.0.1",
  ]);
  const v6 = parseTarget("http://[0:0:0:0:0:FFFF:7F00:1]/", rules);
  assert.deepEqual([v6.host, v6.port, v6.literalIp], [
    "::ffff:7f00:1",
    80,
    "::ffff:7f00:1",
  ]);
});

Deno.test("parseTarget refuses plain http unless allowHttp, naming WEBHOOK_ALLOW_HTTP", () => {
  assert.throws(
    () =>
      parseTarget("http://hooks.example.com/", {
        allowHttp: false,
        allowPrivate: true,
      }),
    (err: unknown) =>
      err instanceof EgressError && err.kind === "blocked" &&
      err.message.includes("WEBHOOK_ALLOW_HTTP=true"),
  );
  parseTarget("https://hooks.example.com/", {
    allowHttp: false,
    allowPrivate: false,
  });
});

Deno.test("blocked messages name the address, why, and the variable only when it would help", () => {
  const rules = { allowHttp: true, allowPrivate: false };
  assert.throws(() => parseTarget("http://10.0.0.1/hook", rules), {
    name: "EgressError",
    message:
      'Cannot use "http://10.0.0.1/hook": "10.0.0.1" is a private address (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow private networks in development)',
  });
  assert.throws(() => parseTarget("http://169.254.169.254/", rules), {
    message:
      'Cannot use "http://169.254.169.254/": "169.254.169.254" is a cloud metadata address',
  });
  assert.throws(
    () => parseTarget("https://u:secret@hooks.example.com/", rules),
    (err: unknown) => {
      assert.ok(err instanceof EgressError);
      assert.equal(err.message.includes("secret"), false, err.message);
      return err.kind === "invalid_url";
    },
  );
});

Deno.test("checkUrl blocks a name that resolves to a private address", async () => {
  const resolver = (host: string) =>
    Promise.resolve(host === "hooks.test" ? ["8.8.8.8", "10.0.0.7"] : []);
  await assert.rejects(
    checkUrl("https://hooks.test/x", {
      allowHttp: false,
      allowPrivate: false,
      resolver,
    }),
    {
      name: "EgressError",
      message:
        'Cannot use "https://hooks.test/x": "hooks.test" resolves to a blocked address: "10.0.0.7" is a private address (set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow private networks in development)',
    },
  );
  const ok = await checkUrl("https://hooks.test/x", {
    allowHttp: false,
    allowPrivate: true,
    resolver,
  });
  assert.equal(ok.host, "hooks.test");
});

Deno.test("checkUrl passes a name that resolves to public addresses only", async () => {
  const asked: string[] = [];
  const resolver = (host: string) => {
    asked.push(host);
    return Promise.resolve([
      "93.184.215.14",
      "2606:2800:21f:cb07:6820:80da:af6b:8b2c",
    ]);
  };
  const target = await checkUrl("https://Hooks.Test./x", {
    allowHttp: false,
    allowPrivate: false,
    resolver,
  });
  assert.deepEqual(asked, ["hooks.test"]);
  assert.equal(target.literalIp, null);
});

Deno.test("checkUrl passes a name the resolver cannot resolve", async () => {
  const resolver = () =>
    Promise.reject(new Error("getaddrinfo ENOTFOUND nowhere.test"));
  const target = await checkUrl("https://nowhere.test/", {
    allowHttp: false,
    allowPrivate: false,
    resolver,
  });
  assert.equal(target.host, "nowhere.test");
});

Deno.test("checkUrl does not resolve IP literals and still blocks them", async () => {
  const resolver = () => Promise.reject(new Error("must not be called"));
  await assert.rejects(
    checkUrl("https://127.0.0.1/", {
      allowHttp: false,
      allowPrivate: false,
      resolver,
    }),
    { name: "EgressError", message: /"127\.0\.0\.1" is a loopback address/ },
  );
  const target = await checkUrl("https://8.8.8.8/", {
    allowHttp: false,
    allowPrivate: false,
    resolver,
  });
  assert.equal(target.literalIp, "8.8.8.8");
});

Deno.test("systemResolver reads /etc/hosts (localhost resolves to loopback)", async () => {
  const addresses = await systemResolver("localhost");
  assert.ok(addresses.length > 0);
  assert.ok(
    addresses.every((a) => a === "127.0.0.1" || a === "::1"),
    addresses.join(", "),
  );
});

import assert from "node:assert/strict";
import { EgressError } from "../../src/egress/errors.ts";
import { encodeRequest, parseHead } from "../../src/egress/http_parse.ts";
import { parseTarget } from "../../src/egress/target.ts";

const RULES = { allowHttp: true, allowPrivate: true };
const text = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array) => new TextDecoder().decode(b);

function head(lines: string[]) {
  return parseHead(text(lines.join("\r\n")));
}

Deno.test("encodeRequest brackets IPv6 hosts and omits default ports", () => {
  const cases: Array<[string, string]> = [
    ["http://[::1]:8080/x", "GET /x HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n"],
    [
      "http://[2606:4700::1111]/",
      "GET / HTTP/1.1\r\nHost: [2606:4700::1111]\r\n\r\n",
    ],
    [
      "https://hooks.test:443/a?b#c",
      "GET /a?b HTTP/1.1\r\nHost: hooks.test\r\n\r\n",
    ],
    [
      "http://hooks.test:443/",
      "GET / HTTP/1.1\r\nHost: hooks.test:443\r\n\r\n",
    ],
    [
      "https://Bücher.example/ä",
      "GET /%C3%A4 HTTP/1.1\r\nHost: xn--bcher-kva.example\r\n\r\n",
    ],
  ];
  for (const [url, bytes] of cases) {
    const out = encodeRequest("GET", parseTarget(url, RULES), { headers: [] });
    assert.equal(decode(out), bytes, url);
  }
});

Deno.test("encodeRequest refuses methods other than POST and GET", () => {
  const target = parseTarget("https://hooks.test/", RULES);
  assert.throws(
    () => encodeRequest("GET / HTTP/1.1\r\nX:", target, { headers: [] }),
    (err: unknown) => err instanceof EgressError && err.kind === "protocol",
  );
});

Deno.test("encodeRequest writes headers and body exactly, and refuses a bad header however often it is sent", () => {
  const target = parseTarget("http://hooks.test:8080/in?x=1", RULES);
  const body = text('{"a":"é"}');
  const out = encodeRequest("POST", target, {
    headers: [["X-Name", "ünïcode value"], [
      "Content-Type",
      "application/json",
    ]],
    body,
  });
  assert.equal(
    decode(out),
    "POST /in?x=1 HTTP/1.1\r\nHost: hooks.test:8080\r\nX-Name: ünïcode value\r\n" +
      'Content-Type: application/json\r\nContent-Length: 10\r\n\r\n{"a":"é"}',
  );
  assert.equal(out.byteLength, decode(out).length + 3, "UTF-8 bytes, no slack");
  const refused = (headers: Array<[string, string]>) =>
    assert.throws(
      () => encodeRequest("POST", target, { headers, body }),
      (err: unknown) => err instanceof EgressError && err.kind === "protocol",
      JSON.stringify(headers),
    );
  // Twice each: a name accepted once is remembered, a refused one never is.
  for (let i = 0; i < 2; i++) {
    refused([["Bad Name", "v"]]);
    refused([["content-LENGTH", "1"]]);
    refused([["Transfer-Encoding", "chunked"]]);
    refused([["X-Name", "a\r\nInjected: 1"]]);
    refused([["X-Name", "a\nb"]]);
    refused([["X-Name", "a\0b"]]);
  }
});

Deno.test("parseHead picks the body framing of RFC 9112", () => {
  const framing = (lines: string[]) => {
    const parsed = head(lines);
    return { ...parsed.framing, keepAlive: parsed.keepAlive };
  };
  assert.deepEqual(framing(["HTTP/1.1 200 OK", "Content-Length: 12"]), {
    kind: "length",
    length: 12,
    keepAlive: true,
  });
  assert.deepEqual(
    framing([
      "HTTP/1.1 200 OK",
      "Transfer-Encoding: chunked",
      "Content-Length: 3",
    ]),
    { kind: "chunked", keepAlive: false },
    "Transfer-Encoding wins, and the mix is not trusted for reuse",
  );
  assert.deepEqual(
    framing(["HTTP/1.1 200 OK", "Transfer-Encoding: chunked, gzip"]),
    {
      kind: "eof",
      keepAlive: false,
    },
  );
  assert.deepEqual(framing(["HTTP/1.1 200 OK"]), {
    kind: "eof",
    keepAlive: false,
  });
  assert.deepEqual(
    framing(["HTTP/1.1 304 Not Modified", "Content-Length: 99"]),
    {
      kind: "none",
      keepAlive: true,
    },
  );
  assert.deepEqual(framing(["HTTP/1.1 204 No Content"]), {
    kind: "none",
    keepAlive: true,
  });
  assert.deepEqual(framing(["HTTP/1.0 200 OK", "Content-Length: 1"]), {
    kind: "length",
    length: 1,
    keepAlive: false,
  });
  assert.deepEqual(
    framing([
      "HTTP/1.1 200 OK",
      "Content-Length: 1",
      "Connection: keep-alive, Close",
    ]),
    {
      kind: "length",
      length: 1,
      keepAlive: false,
    },
  );
});

Deno.test("parseHead keeps header values as octets and trims optional whitespace", () => {
  const bytes = new Uint8Array([
    ...text("HTTP/1.1 200 OK\r\nX-Name: \t caf"),
    0xe9,
    ...text(" \t"),
  ]);
  const parsed = parseHead(bytes);
  assert.equal(parsed.headers.get("x-name"), "caf\u00e9");
  assert.equal(
    head(["HTTP/1.1 503"]).status,
    503,
    "the reason phrase is optional",
  );
});

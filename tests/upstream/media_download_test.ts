// Media downloads against a real HTTP server (the fault server on 127.0.0.1):
// where the token may go, what the SSRF guard refuses, and the size limit.
import assert from "node:assert/strict";
import { EgressClient } from "../../src/egress/http_client.ts";
import type { GraphAuth } from "../../src/upstream/graph_api.ts";
import { createGraphClient } from "../../src/upstream/graph_client.ts";
import {
  type FaultServer,
  respond,
  startFaultServer,
} from "../_support/fault_server.ts";
import { rejection } from "./_rejection.ts";

const AUTH: GraphAuth = { phoneNumberId: "1065", accessToken: "EAAG-secret" };
/** Names the tests resolve to 127.0.0.1 (where the fault server listens). */
const NAMES = ["media.test", "elsewhere.test"];

interface Rig extends AsyncDisposable {
  server: FaultServer;
  /** A client whose media hosts are `hosts`. */
  download(
    url: string,
    options?: { maxBytes?: number },
  ): Promise<{ bytes: Uint8Array; contentType: string | null }>;
}

async function rig(
  options: { hosts: string[]; allowPrivate?: boolean },
): Promise<Rig> {
  const server = await startFaultServer();
  const egress = new EgressClient({
    allowPrivate: options.allowPrivate ?? true,
    allowHttp: true,
    resolver: (host) =>
      Promise.resolve(NAMES.includes(host) ? ["127.0.0.1"] : []),
  });
  const client = createGraphClient({
    baseUrl: "https://graph.facebook.com/v22.0",
    media: { egress, hosts: options.hosts },
  });
  return {
    server,
    async download(url, { maxBytes = 1_000_000 } = {}) {
      const chunks: Uint8Array<ArrayBuffer>[] = [];
      const file = await client.downloadMedia(AUTH, url, {
        maxBytes,
        // The chunk is the connection's buffer: keep a copy.
        write: (chunk) => Promise.resolve(void chunks.push(chunk.slice())),
      });
      const bytes = new Uint8Array(await new Blob(chunks).arrayBuffer());
      return { bytes, contentType: file.contentType };
    },
    async [Symbol.asyncDispose]() {
      egress.close();
      await server.close();
    },
  };
}

function header(server: FaultServer, i: number, name: string) {
  return server.requests[i]?.headers.find(([n]) => n.toLowerCase() === name)
    ?.[1];
}

Deno.test("the channel token goes with the download to a media host", async () => {
  await using r = await rig({ hosts: ["media.test"] });
  r.server.script(
    respond(200, { headers: { "Content-Type": "image/jpeg" }, body: "JPEG" }),
  );
  const got = await r.download(
    r.server.url("/m?hash=x").replace(
      "127.0.0.1",
      "media.test",
    ),
  );
  assert.equal(new TextDecoder().decode(got.bytes), "JPEG");
  assert.equal(got.contentType, "image/jpeg");
  assert.equal(header(r.server, 0, "authorization"), "Bearer EAAG-secret");
});

Deno.test("a URL whose host is not a media host is refused before any connection", async () => {
  await using r = await rig({ hosts: ["lookaside.fbsbx.com", "*.fbsbx.com"] });
  for (const host of ["127.0.0.1", "media.test", "fbsbx.com.evil.test"]) {
    const err = await rejection(
      r.download(r.server.url("/m").replace("127.0.0.1", host)),
    );
    assert.equal(err.category, "media_host_not_allowed", host);
    assert.equal(err.retryable, false);
  }
  assert.equal(r.server.connections, 0, "the token must never leave");
});

Deno.test("a media host on a private address is refused (no private networks allowed)", async () => {
  await using r = await rig({
    hosts: ["media.test", "127.0.0.1"],
    allowPrivate: false,
  });
  for (const host of ["media.test", "127.0.0.1"]) {
    const err = await rejection(
      r.download(r.server.url("/m").replace("127.0.0.1", host)),
    );
    assert.equal(err.category, "media_host_not_allowed", host);
    assert.match(err.message, /loopback/);
  }
  assert.equal(r.server.connections, 0);
});

Deno.test("a redirect is followed only to a media host, with the token", async () => {
  await using r = await rig({ hosts: ["media.test"] });
  const at = (host: string, path: string) =>
    r.server.url(path).replace("127.0.0.1", host);
  r.server.script(
    respond(302, { headers: { Location: at("media.test", "/cdn/2") } }),
    respond(200, { body: "moved bytes" }),
    respond(302, { headers: { Location: at("elsewhere.test", "/steal") } }),
  );
  const got = await r.download(at("media.test", "/1"));
  assert.equal(new TextDecoder().decode(got.bytes), "moved bytes");
  assert.equal(r.server.requests[1]?.target, "/cdn/2");
  assert.equal(header(r.server, 1, "authorization"), "Bearer EAAG-secret");

  const err = await rejection(r.download(at("media.test", "/3")));
  assert.equal(err.category, "media_host_not_allowed");
  assert.match(err.message, /"elsewhere\.test"/);
  assert.equal(
    r.server.requests.length,
    3,
    "the off-list redirect is not followed",
  );
});

Deno.test("media above maxBytes fails whether its length is declared or streamed", async () => {
  await using r = await rig({ hosts: ["media.test"] });
  const url = r.server.url("/m").replace("127.0.0.1", "media.test");
  r.server.script(
    respond(200, { body: new Uint8Array(8192) }),
    respond(200, { body: new Uint8Array(8192), chunked: true }),
  );
  for (const framing of ["content-length", "chunked"]) {
    const err = await rejection(r.download(url, { maxBytes: 4096 }));
    assert.equal(err.category, "media_too_large", framing);
    assert.equal(err.retryable, false);
  }
});

Deno.test("media of exactly maxBytes is accepted in either framing", async () => {
  await using r = await rig({ hosts: ["media.test"] });
  const url = r.server.url("/m").replace("127.0.0.1", "media.test");
  r.server.script(
    respond(200, { body: new Uint8Array(4096).fill(1) }),
    respond(200, { body: new Uint8Array(4096).fill(2), chunked: true }),
  );
  for (const fill of [1, 2]) {
    const got = await r.download(url, { maxBytes: 4096 });
    assert.deepEqual(got.bytes, new Uint8Array(4096).fill(fill));
  }
});

Deno.test("a failed download is classified by its status", async () => {
  await using r = await rig({ hosts: ["media.test"] });
  r.server.script(respond(404, { body: "<html>gone</html>" }));
  const err = await rejection(
    r.download(r.server.url("/m").replace("127.0.0.1", "media.test")),
  );
  assert.equal(err.category, "not_found");
  assert.equal(err.httpStatus, 404);
  assert.equal(err.retryable, false);
});

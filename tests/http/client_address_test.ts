import assert from "node:assert/strict";
import { IpRanges } from "../../src/net/ip_range.ts";
import { resolveClientAddress } from "../../src/http/client_address.ts";
import type { Logger } from "../../src/log.ts";
import { createHarness } from "../_harness.ts";

const PROXIES = IpRanges.parse("127.0.0.1, 10.0.0.0/8, 2001:db8:ffff::/48")
  .ranges;
const NONE = IpRanges.EMPTY;

Deno.test("without TRUSTED_PROXIES the peer is the client and X-Forwarded-For is ignored", () => {
  assert.deepEqual(
    resolveClientAddress("127.0.0.1", "198.51.100.7", NONE),
    { address: "127.0.0.1", distinct: false },
  );
  assert.deepEqual(
    resolveClientAddress("::ffff:203.0.113.9", null, NONE),
    { address: "203.0.113.9", distinct: false },
  );
  assert.deepEqual(resolveClientAddress(undefined, "1.2.3.4", NONE), {
    address: "unknown",
    distinct: false,
  });
});

Deno.test("a peer that is not a trusted proxy is the client, its forwarding headers ignored", () => {
  assert.deepEqual(
    resolveClientAddress("203.0.113.9", "173.252.127.1", PROXIES),
    { address: "203.0.113.9", distinct: true },
  );
});

Deno.test("behind trusted proxies the client is the right-most hop that is not one", () => {
  const cases: [string, string | null, string, boolean][] = [
    // peer, X-Forwarded-For (every occurrence joined), client, distinct
    ["127.0.0.1", "173.252.127.1", "173.252.127.1", true],
    ["::ffff:127.0.0.1", "173.252.127.1", "173.252.127.1", true],
    // A client-written left part cannot pose as another client.
    ["127.0.0.1", "6.6.6.6, 173.252.127.1", "173.252.127.1", true],
    ["127.0.0.1", "6.6.6.6, 173.252.127.1, 10.1.1.1", "173.252.127.1", true],
    ["10.2.2.2", "2001:db8::7, 2001:db8:ffff::1", "2001:db8::7", true],
    ["127.0.0.1", "[2001:db8::7]:5123, 10.0.0.1:80", "2001:db8::7", true],
    ["127.0.0.1", "::ffff:173.252.127.1", "173.252.127.1", true],
    // A malformed hop ends the walk: the last good address is used.
    ["127.0.0.1", "173.252.127.1, unknown", "127.0.0.1", false],
    ["127.0.0.1", "173.252.127.1, garbage, 10.0.0.3", "10.0.0.3", false],
    // Every hop trusted: the left-most.
    ["127.0.0.1", "10.0.0.5, 10.0.0.6", "10.0.0.5", false],
    // No header: the proxy itself.
    ["127.0.0.1", null, "127.0.0.1", false],
    ["127.0.0.1", "", "127.0.0.1", false],
  ];
  for (const [peer, xff, address, distinct] of cases) {
    assert.deepEqual(
      resolveClientAddress(peer, xff, PROXIES),
      { address, distinct },
      `${peer} ${xff}`,
    );
  }
});

Deno.test("the request log names the client address, with every X-Forwarded-For occurrence read in order", async () => {
  await using h = await createHarness({
    env: { TRUSTED_PROXIES: "127.0.0.1" },
  });
  const lines: Record<string, unknown>[] = [];
  const record = (fields?: Record<string, unknown>) =>
    void lines.push({ ...fields });
  const recorder: Logger = {
    debug: () => {},
    info: (_msg, fields) => record(fields),
    warn: (_msg, fields) => record(fields),
    error: (_msg, fields) => record(fields),
    child: () => recorder,
  };
  (h.container as { log: Logger }).log = recorder;
  const headers = new Headers();
  headers.append("x-forwarded-for", "6.6.6.6");
  headers.append("x-forwarded-for", "173.252.127.9, 127.0.0.1");
  const res = await h.app.fetch(
    new Request("http://localhost/healthz", { headers }),
    { remoteAddr: { hostname: "127.0.0.1", port: 1, transport: "tcp" } },
  );
  await res.body?.cancel();
  assert.deepEqual(lines.map((l) => l.client), ["173.252.127.9"]);
});

import assert from "node:assert/strict";
import {
  type BlockReason,
  checkAddress,
  isIpLiteral,
} from "../../src/egress/address.ts";

type Expect = "ok" | BlockReason;

/** [address, verdict with allowPrivate false, verdict with allowPrivate true] */
const CASES: Array<[string, Expect, Expect]> = [
  // IPv4 public, including the edges next to special ranges.
  ["8.8.8.8", "ok", "ok"],
  ["1.1.1.1", "ok", "ok"],
  ["9.255.255.255", "ok", "ok"],
  ["11.0.0.0", "ok", "ok"],
  ["126.255.255.255", "ok", "ok"],
  ["128.0.0.0", "ok", "ok"],
  ["172.15.255.255", "ok", "ok"],
  ["172.32.0.0", "ok", "ok"],
  ["192.167.255.255", "ok", "ok"],
  ["192.169.0.0", "ok", "ok"],
  ["100.63.255.255", "ok", "ok"],
  ["100.128.0.0", "ok", "ok"],
  ["169.253.255.255", "ok", "ok"],
  ["169.255.0.0", "ok", "ok"],
  ["198.17.255.255", "ok", "ok"],
  ["198.20.0.0", "ok", "ok"],
  ["192.0.1.255", "ok", "ok"],
  ["192.0.3.0", "ok", "ok"],
  ["223.255.255.255", "ok", "ok"],
  ["1.0.0.0", "ok", "ok"],
  // IPv4 opened by WEBHOOK_ALLOW_PRIVATE_NETWORKS.
  ["127.0.0.1", "loopback", "ok"],
  ["127.255.255.254", "loopback", "ok"],
  ["10.0.0.1", "private", "ok"],
  ["10.255.255.255", "private", "ok"],
  ["172.16.0.0", "private", "ok"],
  ["172.31.255.255", "private", "ok"],
  ["192.168.0.1", "private", "ok"],
  ["192.168.255.255", "private", "ok"],
  ["100.64.0.0", "cgnat", "ok"],
  ["100.127.255.255", "cgnat", "ok"],
  // IPv4 never allowed.
  ["0.0.0.0", "unspecified", "unspecified"],
  ["0.255.255.255", "unspecified", "unspecified"],
  ["169.254.169.254", "metadata", "metadata"],
  ["100.100.100.200", "metadata", "metadata"],
  ["169.254.0.1", "link-local", "link-local"],
  ["169.254.255.255", "link-local", "link-local"],
  ["192.0.0.1", "reserved", "reserved"],
  ["192.0.2.1", "documentation", "documentation"],
  ["198.51.100.7", "documentation", "documentation"],
  ["203.0.113.255", "documentation", "documentation"],
  ["198.18.0.0", "benchmarking", "benchmarking"],
  ["198.19.255.255", "benchmarking", "benchmarking"],
  ["192.88.99.1", "ipv6-transition", "ipv6-transition"],
  ["224.0.0.1", "multicast", "multicast"],
  ["239.255.255.255", "multicast", "multicast"],
  ["240.0.0.1", "reserved", "reserved"],
  ["255.255.255.255", "reserved", "reserved"],
  // IPv6 public.
  ["2606:4700::1111", "ok", "ok"],
  ["2001:4860:4860::8888", "ok", "ok"],
  ["2a00:1450:4001:82b::200e", "ok", "ok"],
  ["2001:200::1", "ok", "ok"],
  ["2003::1", "ok", "ok"],
  ["3ffe:ffff::1", "ok", "ok"],
  ["2600:1F18:0:0:0:0:0:1", "ok", "ok"],
  // IPv6 opened by WEBHOOK_ALLOW_PRIVATE_NETWORKS.
  ["::1", "loopback", "ok"],
  ["0:0:0:0:0:0:0:1", "loopback", "ok"],
  ["fc00::1", "private", "ok"],
  ["fd12:3456:789a::1", "private", "ok"],
  // IPv6 never allowed.
  ["::", "unspecified", "unspecified"],
  ["::7f00:1", "ipv6-transition", "ipv6-transition"],
  ["::1.2.3.4", "ipv6-transition", "ipv6-transition"],
  ["fe80::1", "link-local", "link-local"],
  ["febf:ffff::1", "link-local", "link-local"],
  ["fec0::1", "reserved", "reserved"],
  ["ff02::1", "multicast", "multicast"],
  ["2001:db8::1", "documentation", "documentation"],
  ["3fff:fff::1", "documentation", "documentation"],
  ["100::1", "reserved", "reserved"],
  ["2001::1", "ipv6-transition", "ipv6-transition"],
  ["2001:1ff::1", "reserved", "reserved"],
  ["2001:2::1", "benchmarking", "benchmarking"],
  ["2002:7f00:1::1", "ipv6-transition", "ipv6-transition"],
  ["64:ff9b::7f00:1", "ipv6-transition", "ipv6-transition"],
  ["64:ff9b::8.8.8.8", "ipv6-transition", "ipv6-transition"],
  ["64:ff9b:1::1", "ipv6-transition", "ipv6-transition"],
  ["5f00::1", "reserved", "reserved"],
  ["fd00:ec2::254", "metadata", "metadata"],
  ["4000::1", "reserved", "reserved"],
  ["1::1", "reserved", "reserved"],
  // IPv4-mapped and IPv4-translated: classified by the embedded IPv4.
  ["::ffff:127.0.0.1", "loopback", "ok"],
  ["::ffff:7f00:1", "loopback", "ok"],
  ["::FFFF:10.1.2.3", "private", "ok"],
  ["::ffff:169.254.169.254", "metadata", "metadata"],
  ["::ffff:0.0.0.0", "unspecified", "unspecified"],
  ["::ffff:8.8.8.8", "ok", "ok"],
  ["0:0:0:0:0:ffff:7f00:1", "loopback", "ok"],
  ["::ffff:0:127.0.0.1", "loopback", "ok"],
  ["::ffff:0:a9fe:a9fe", "metadata", "metadata"],
  ["::ffff:0:8.8.8.8", "ok", "ok"],
  // Not IP addresses.
  ["", "not-an-ip", "not-an-ip"],
  ["localhost", "not-an-ip", "not-an-ip"],
  ["127.1", "not-an-ip", "not-an-ip"],
  ["0177.0.0.1", "not-an-ip", "not-an-ip"],
  ["1.2.3.256", "not-an-ip", "not-an-ip"],
  ["1.2.3.4.", "not-an-ip", "not-an-ip"],
  ["[::1]", "not-an-ip", "not-an-ip"],
  ["fe80::1%eth0", "not-an-ip", "not-an-ip"],
  ["1::2::3", "not-an-ip", "not-an-ip"],
  [":::", "not-an-ip", "not-an-ip"],
  ["12345::1", "not-an-ip", "not-an-ip"],
  ["1:2:3:4:5:6:7:8:9", "not-an-ip", "not-an-ip"],
  ["1:2:3:4:5:6:7::8", "not-an-ip", "not-an-ip"],
  ["::ffff:1.2.3", "not-an-ip", "not-an-ip"],
  ["1.2.3.4::", "not-an-ip", "not-an-ip"],
  ["g::1", "not-an-ip", "not-an-ip"],
];

function outcome(ip: string, allowPrivate: boolean): Expect {
  const verdict = checkAddress(ip, { allowPrivate });
  return verdict.allowed ? "ok" : verdict.reason;
}

Deno.test("checkAddress classifies every range with and without allowPrivate", () => {
  assert.ok(CASES.length >= 90, `only ${CASES.length} cases`);
  const wrong: string[] = [];
  for (const [ip, strict, relaxed] of CASES) {
    for (const [allowPrivate, want] of [[false, strict], [true, relaxed]]) {
      const got = outcome(ip, allowPrivate as boolean);
      if (got !== want) {
        wrong.push(
          `${ip} (allowPrivate ${allowPrivate}): ${got}, want ${want}`,
        );
      }
    }
  }
  assert.deepEqual(wrong, []);
});

Deno.test("checkAddress messages name the address and what it is", () => {
  const cases: Array<[string, string]> = [
    ["10.0.0.1", '"10.0.0.1" is a private address'],
    ["169.254.169.254", '"169.254.169.254" is a cloud metadata address'],
    [
      "::ffff:127.0.0.1",
      '"::ffff:127.0.0.1" is a loopback address (IPv4-mapped "127.0.0.1")',
    ],
    [
      "::ffff:0:a9fe:a9fe",
      '"::ffff:0:a9fe:a9fe" is a cloud metadata address (IPv4-translated "169.254.169.254")',
    ],
    ["2001::1", '"2001::1" is a Teredo address'],
    ["nope", '"nope" is not an IP address'],
  ];
  for (const [ip, message] of cases) {
    const verdict = checkAddress(ip, { allowPrivate: false });
    assert.equal(verdict.allowed, false, ip);
    assert.equal(!verdict.allowed && verdict.message, message);
  }
});

Deno.test("isIpLiteral accepts dotted quads and bare IPv6 only", () => {
  for (
    const host of [
      "1.2.3.4",
      "::1",
      "::",
      "2606:4700::1111",
      "::ffff:1.2.3.4",
      "A::B",
    ]
  ) {
    assert.equal(isIpLiteral(host), true, host);
  }
  for (
    const host of [
      "[::1]",
      "1.2.3",
      "01.2.3.4",
      "hooks.test",
      "fe80::1%1",
      "",
      "1:2",
    ]
  ) {
    assert.equal(isIpLiteral(host), false, host);
  }
});

import assert from "node:assert/strict";
import { IpRanges, normalizeIp } from "../../src/net/ip_range.ts";

Deno.test("normalizeIp writes one form per address and drops ports, brackets and the IPv4-mapped prefix", () => {
  const cases: [string, string | null][] = [
    ["203.0.113.7", "203.0.113.7"],
    [" 203.0.113.7 ", "203.0.113.7"],
    ["203.0.113.7:5678", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["::FFFF:CB00:7107", "203.0.113.7"],
    ["[::ffff:203.0.113.7]:80", "203.0.113.7"],
    ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
    ["2001:db8::0:1", "2001:db8::1"],
    ["[2001:db8::1]", "2001:db8::1"],
    ["[2001:db8::1]:443", "2001:db8::1"],
    ["2001:0:0:1:0:0:0:1", "2001:0:0:1::1"],
    ["::1", "::1"],
    ["::", "::"],
    ["unknown", null],
    ["", null],
    ["203.0.113", null],
    ["203.0.113.07", null],
    ["fe80::1%eth0", null],
    ["[2001:db8::1", null],
    ["[2001:db8::1]:x", null],
    ["[203.0.113.7]", null],
    ["example.com", null],
    ["_hidden", null],
    ["203.0.113.7:99999999", null],
  ];
  for (const [text, want] of cases) assert.equal(normalizeIp(text), want, text);
});

Deno.test("IpRanges matches addresses and CIDR ranges of both families, whatever the spelling", () => {
  const { ranges, problems } = IpRanges.parse(
    " 10.0.0.0/8, 192.168.1.7 ,2001:db8::/32,, ::1 ",
  );
  assert.deepEqual(problems, []);
  assert.equal(ranges.size, 4);
  for (
    const ip of [
      "10.1.2.3",
      "::ffff:10.1.2.3",
      "192.168.1.7",
      "2001:db8:ffff::1",
      "2001:DB8::",
      "::1",
      "[::1]:80",
    ]
  ) assert.equal(ranges.has(ip), true, ip);
  for (
    const ip of [
      "11.0.0.1",
      "192.168.1.8",
      "2001:db9::1",
      "::2",
      "unknown",
      "",
    ]
  ) assert.equal(ranges.has(ip), false, ip);
  const odd = IpRanges.parse("172.16.0.0/12, 0.0.0.0/0").ranges;
  assert.equal(odd.has("172.31.255.255"), true);
  assert.equal(odd.has("2001:db8::1"), false, "an IPv4 range holds no IPv6");
  assert.equal(IpRanges.parse("::/0").ranges.has("2001:db8::1"), true);
});

Deno.test("IpRanges.parse names every entry that is not an address or a range", () => {
  const { problems } = IpRanges.parse(
    "10.0.0.0/33, 2001:db8::/129, proxy.local, 10.0.0.1/, 10.0.0.0/8/8, 1.2.3.4",
  );
  assert.equal(problems.length, 5);
  for (
    const bad of [
      "10.0.0.0/33",
      "2001:db8::/129",
      "proxy.local",
      "10.0.0.1/",
      "10.0.0.0/8/8",
    ]
  ) {
    assert.ok(problems.some((p) => p.includes(`"${bad}"`)), bad);
  }
  assert.equal(IpRanges.parse("").ranges.size, 0);
});

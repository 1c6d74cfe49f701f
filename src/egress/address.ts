// Pure IP classification for outbound requests (SSRF defence). IPv4 is a
// deny list of special-purpose ranges; IPv6 is an allow list (global unicast
// 2000::/3) minus its special ranges, so unassigned space is never dialled.
import { formatIpv4, parseIpv4, parseIpv6 } from "../net/ip_parse.ts";

export type BlockReason =
  | "unspecified"
  | "loopback"
  | "private"
  | "cgnat"
  | "link-local"
  | "metadata"
  | "multicast"
  | "reserved"
  | "documentation"
  | "benchmarking"
  | "ipv6-transition"
  | "not-an-ip";

export type AddressVerdict =
  | { allowed: true }
  | { allowed: false; reason: BlockReason; message: string };

/** A range and what it is; `what` completes the sentence `"1.2.3.4" is ...`. */
interface Special {
  reason: BlockReason;
  what: string;
}

interface Ipv4Range extends Special {
  base: number;
  mask: number;
}

interface Ipv6Range extends Special {
  groups: number[];
  bits: number;
}

const ALLOWED: AddressVerdict = { allowed: true };

/** Reasons that WEBHOOK_ALLOW_PRIVATE_NETWORKS opens; everything else is always blocked. */
const PRIVATE_NETWORK_REASONS: ReadonlySet<BlockReason> = new Set([
  "loopback",
  "private",
  "cgnat",
]);

const METADATA = "a cloud metadata address";
const DOCS = "a documentation address";
const NAT64 = "a NAT64 address";

type Row = [cidr: string, reason: BlockReason, what: string];

// First match wins, so single addresses come before their ranges.
const IPV4_RANGES: Ipv4Range[] = ([
  ["169.254.169.254/32", "metadata", METADATA],
  ["100.100.100.200/32", "metadata", METADATA],
  ["0.0.0.0/8", "unspecified", 'an unspecified ("this network") address'],
  ["127.0.0.0/8", "loopback", "a loopback address"],
  ["10.0.0.0/8", "private", "a private address"],
  ["172.16.0.0/12", "private", "a private address"],
  ["192.168.0.0/16", "private", "a private address"],
  ["100.64.0.0/10", "cgnat", "a shared (carrier-grade NAT) address"],
  ["169.254.0.0/16", "link-local", "a link-local address"],
  ["192.0.0.0/24", "reserved", "an IETF protocol assignment address"],
  ["192.0.2.0/24", "documentation", DOCS],
  ["198.51.100.0/24", "documentation", DOCS],
  ["203.0.113.0/24", "documentation", DOCS],
  ["198.18.0.0/15", "benchmarking", "a benchmarking address"],
  ["192.88.99.0/24", "ipv6-transition", "a 6to4 relay anycast address"],
  ["224.0.0.0/4", "multicast", "a multicast address"],
  ["255.255.255.255/32", "reserved", "the broadcast address"],
  ["240.0.0.0/4", "reserved", "a reserved address"],
] satisfies Row[]).map(v4);

const IPV6_RANGES: Ipv6Range[] = ([
  ["::/128", "unspecified", "an unspecified address"],
  ["::1/128", "loopback", "a loopback address"],
  ["::/96", "ipv6-transition", "an IPv4-compatible address (deprecated)"],
  ["fd00:ec2::254/128", "metadata", METADATA],
  ["64:ff9b::/96", "ipv6-transition", NAT64],
  ["64:ff9b:1::/48", "ipv6-transition", NAT64],
  ["100::/64", "reserved", "a discard-only address"],
  ["2001:2::/48", "benchmarking", "a benchmarking address"],
  ["2001::/32", "ipv6-transition", "a Teredo address"],
  ["2001::/23", "reserved", "an IETF protocol assignment address"],
  ["2001:db8::/32", "documentation", DOCS],
  ["3fff::/20", "documentation", DOCS],
  ["2002::/16", "ipv6-transition", "a 6to4 address"],
  ["5f00::/16", "reserved", "a segment routing (SRv6) address"],
  ["fe80::/10", "link-local", "a link-local address"],
  ["fec0::/10", "reserved", "a site-local address (deprecated)"],
  ["fc00::/7", "private", "a unique local (private) address"],
  ["ff00::/8", "multicast", "a multicast address"],
] satisfies Row[]).map(v6);

const OUTSIDE_GLOBAL_UNICAST: Special = {
  reason: "reserved",
  what: "a reserved address (outside global unicast 2000::/3)",
};

/** Classifies one IP address; only public unicast (and, with allowPrivate, loopback/private/CGNAT) is allowed. */
export function checkAddress(
  ip: string,
  options: { allowPrivate: boolean },
): AddressVerdict {
  const v4 = parseIpv4(ip);
  if (v4 !== null) return verdict(ip, classifyIpv4(v4), options);
  const groups = parseIpv6(ip);
  if (groups === null) {
    return {
      allowed: false,
      reason: "not-an-ip",
      message: `"${ip}" is not an IP address`,
    };
  }
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated) reach IPv4.
  const zeros = groups[0] === 0 && groups[1] === 0 && groups[2] === 0 &&
    groups[3] === 0;
  const mapped = zeros && groups[4] === 0 && groups[5] === 0xffff;
  const translated = zeros && groups[4] === 0xffff && groups[5] === 0;
  if (mapped || translated) {
    const embedded = groups[6]! * 0x10000 + groups[7]!;
    const note = ` (IPv4-${mapped ? "mapped" : "translated"} "${
      formatIpv4(embedded)
    }")`;
    return verdict(ip, classifyIpv4(embedded), {
      allowPrivate: options.allowPrivate,
      note,
    });
  }
  return verdict(ip, classifyIpv6(groups), options);
}

/** True for a dotted-quad IPv4 address or an IPv6 address without brackets or zone. */
export function isIpLiteral(host: string): boolean {
  return parseIpv4(host) !== null || parseIpv6(host) !== null;
}

/** True when WEBHOOK_ALLOW_PRIVATE_NETWORKS would allow addresses blocked for this reason. */
export function isPrivateNetworkReason(reason: BlockReason): boolean {
  return PRIVATE_NETWORK_REASONS.has(reason);
}

function verdict(
  ip: string,
  special: Special | null,
  options: { allowPrivate: boolean; note?: string },
): AddressVerdict {
  if (special === null) return ALLOWED;
  if (options.allowPrivate && PRIVATE_NETWORK_REASONS.has(special.reason)) {
    return ALLOWED;
  }
  return {
    allowed: false,
    reason: special.reason,
    message: `"${ip}" is ${special.what}${options.note ?? ""}`,
  };
}

function classifyIpv4(n: number): Special | null {
  for (const range of IPV4_RANGES) {
    if (((n & range.mask) >>> 0) === range.base) return range;
  }
  return null;
}

function classifyIpv6(groups: number[]): Special | null {
  for (const range of IPV6_RANGES) {
    if (inPrefix(groups, range)) return range;
  }
  return (groups[0]! & 0xe000) === 0x2000 ? null : OUTSIDE_GLOBAL_UNICAST;
}

function inPrefix(groups: number[], range: Ipv6Range): boolean {
  for (let i = 0, bits = range.bits; bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i]! & mask) !== range.groups[i]) return false;
  }
  return true;
}

function v4([cidr, reason, what]: Row): Ipv4Range {
  const [ip, bits] = cidr.split("/") as [string, string];
  const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
  return { base: (parseIpv4(ip)! & mask) >>> 0, mask, reason, what };
}

function v6([cidr, reason, what]: Row): Ipv6Range {
  const [ip, bits] = cidr.split("/") as [string, string];
  return { groups: parseIpv6(ip)!, bits: Number(bits), reason, what };
}

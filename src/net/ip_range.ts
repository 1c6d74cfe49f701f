// IP addresses as peers and proxies name them, and lists of CIDR ranges
// (TRUSTED_PROXIES). Pure: no DNS, no I/O.
import { formatIpv4, parseIpv4, parseIpv6 } from "./ip_parse.ts";

/** An address as eight 16-bit groups; IPv4 is kept in its mapped form (::ffff:a.b.c.d). */
type Groups = number[];

interface Range {
  groups: Groups;
  /** Prefix length over the 128 bits. */
  bits: number;
}

/** IPv4 as its IPv4-mapped IPv6 groups, so one comparison serves both families. */
function mapped(v4: number): Groups {
  return [0, 0, 0, 0, 0, 0xffff, Math.floor(v4 / 0x10000), v4 % 0x10000];
}

function isMapped(g: Groups): boolean {
  return g[0] === 0 && g[1] === 0 && g[2] === 0 && g[3] === 0 &&
    g[4] === 0 && g[5] === 0xffff;
}

/** A bare address (no port, no brackets, no zone) as groups, or null. */
function parseAddress(text: string): Groups | null {
  const v4 = parseIpv4(text);
  if (v4 !== null) return mapped(v4);
  return text.includes(":") ? parseIpv6(text) : null;
}

/** RFC 5952 text: IPv4 (mapped ones too) dotted, IPv6 lower case with the longest zero run as `::`. */
function formatGroups(g: Groups): string {
  if (isMapped(g)) return formatIpv4(g[6]! * 0x10000 + g[7]!);
  let bestAt = -1;
  let bestLen = 1;
  for (let i = 0; i < 8;) {
    let j = i;
    while (j < 8 && g[j] === 0) j++;
    if (j - i > bestLen) [bestAt, bestLen] = [i, j - i];
    i = j === i ? i + 1 : j;
  }
  const hex = g.map((n) => n.toString(16));
  if (bestAt < 0) return hex.join(":");
  return `${hex.slice(0, bestAt).join(":")}::${
    hex.slice(bestAt + bestLen).join(":")
  }`;
}

/**
 * The canonical text of an address as a socket or a proxy writes it, or null
 * when it is not one: IPv4-mapped IPv6 (`::ffff:1.2.3.4`) becomes the IPv4
 * address, a port is dropped (`1.2.3.4:5678`, `[2001:db8::1]:443`), brackets
 * are removed and IPv6 is written in RFC 5952 form. Zone ids, host names and
 * tokens such as `unknown` are not addresses.
 */
export function normalizeIp(text: string): string | null {
  let s = text.trim();
  if (s.startsWith("[")) {
    const end = s.indexOf("]");
    if (end < 0) return null;
    const rest = s.slice(end + 1);
    if (rest !== "" && !/^:\d{1,5}$/.test(rest)) return null;
    s = s.slice(1, end);
    if (!s.includes(":")) return null;
  } else if (/^[\d.]+:\d{1,5}$/.test(s)) {
    s = s.slice(0, s.lastIndexOf(":"));
  }
  const groups = parseAddress(s);
  return groups ? formatGroups(groups) : null;
}

/** A parsed list of addresses and CIDR ranges, IPv4 and IPv6. */
export class IpRanges {
  readonly #ranges: Range[];
  /** The entries as written, for messages. */
  readonly entries: readonly string[];

  private constructor(ranges: Range[], entries: string[]) {
    this.#ranges = ranges;
    this.entries = Object.freeze(entries);
  }

  static readonly EMPTY = new IpRanges([], []);

  /**
   * Parses a comma-separated list (`10.0.0.0/8, 2001:db8::/32, 127.0.0.1`);
   * the problems name each entry that is not an address or a CIDR range.
   */
  static parse(list: string): { ranges: IpRanges; problems: string[] } {
    const ranges: Range[] = [];
    const entries: string[] = [];
    const problems: string[] = [];
    for (const raw of list.split(",")) {
      const entry = raw.trim();
      if (!entry) continue;
      const range = parseRange(entry);
      if (range) {
        ranges.push(range);
        entries.push(entry);
      } else {
        problems.push(
          `"${entry}" is not an IP address or CIDR range (e.g. 10.0.0.0/8, 2001:db8::/32, 127.0.0.1)`,
        );
      }
    }
    return { ranges: new IpRanges(ranges, entries), problems };
  }

  get size(): number {
    return this.#ranges.length;
  }

  /** Whether `ip` (text normalizeIp accepts) is in one of the ranges. */
  has(ip: string): boolean {
    if (this.#ranges.length === 0) return false;
    const text = normalizeIp(ip);
    const groups = text === null ? null : parseAddress(text);
    if (!groups) return false;
    return this.#ranges.some((r) => inRange(groups, r));
  }
}

function parseRange(entry: string): Range | null {
  const slash = entry.indexOf("/");
  const address = slash < 0 ? entry : entry.slice(0, slash);
  const groups = parseAddress(address);
  if (!groups) return null;
  const v4 = isMapped(groups) && !address.includes(":");
  const max = v4 ? 32 : 128;
  let bits = max;
  if (slash >= 0) {
    const prefix = entry.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > max) return null;
    bits = Number(prefix);
  }
  return { groups, bits: v4 ? bits + 96 : bits };
}

function inRange(groups: Groups, range: Range): boolean {
  let left = range.bits;
  for (let i = 0; i < 8 && left > 0; i++, left -= 16) {
    const take = Math.min(16, left);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if ((groups[i]! & mask) !== (range.groups[i]! & mask)) return false;
  }
  return true;
}

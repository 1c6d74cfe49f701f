// Strict textual IP parsing (no DNS, no URL quirks: the URL parser handles those).

/** Strict dotted quad (no leading zeros, no short forms) as an unsigned 32-bit number. */
export function parseIpv4(s: string): number | null {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      if (digits > 0 && part === 0) return null;
      part = part * 10 + (c - 48);
      if (part > 255) return null;
      digits++;
    } else if (c === 46) {
      if (digits === 0 || ++dots > 3) return null;
      value = value * 256 + part;
      part = 0;
      digits = 0;
    } else {
      return null;
    }
  }
  return dots === 3 && digits > 0 ? value * 256 + part : null;
}

/** Eight 16-bit groups; handles `::`, an embedded dotted quad and any case; rejects zone ids. */
export function parseIpv6(s: string): number[] | null {
  if (s.length < 2 || s.length > 45) return null;
  const gap = s.indexOf("::");
  if (gap !== -1 && s.indexOf("::", gap + 1) !== -1) return null;
  if (gap === -1) {
    const all = parseGroups(s, true);
    return all !== null && all.length === 8 ? all : null;
  }
  const head = gap === 0 ? [] : parseGroups(s.slice(0, gap), false);
  const tail = gap + 2 === s.length ? [] : parseGroups(s.slice(gap + 2), true);
  if (head === null || tail === null) return null;
  const fill = 8 - head.length - tail.length;
  if (fill < 1) return null;
  return [...head, ...new Array<number>(fill).fill(0), ...tail];
}

function parseGroups(s: string, ipv4Tail: boolean): number[] | null {
  const parts = s.split(":");
  const groups: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (ipv4Tail && i === parts.length - 1 && part.includes(".")) {
      const v4 = parseIpv4(part);
      if (v4 === null) return null;
      groups.push(Math.floor(v4 / 0x10000), v4 % 0x10000);
      continue;
    }
    if (part.length === 0 || part.length > 4) return null;
    let group = 0;
    for (let j = 0; j < part.length; j++) {
      const digit = hexDigit(part.charCodeAt(j));
      if (digit < 0) return null;
      group = group * 16 + digit;
    }
    groups.push(group);
  }
  return groups.length <= 8 ? groups : null;
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/** Dotted quad of an unsigned 32-bit number. */
export function formatIpv4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

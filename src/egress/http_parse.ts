// Pure HTTP/1.1 encoding and parsing (RFC 9112) for the egress client.
import { EgressError } from "./errors.ts";
import type { Target } from "./target.ts";

/** How the response body is delimited. */
export type Framing =
  | { kind: "none" }
  | { kind: "length"; length: number }
  | { kind: "chunked" }
  | { kind: "eof" };

export interface ResponseHead {
  status: number;
  /** 0 for HTTP/1.0, 1 for HTTP/1.1 (and later 1.x). */
  minor: number;
  headers: Headers;
  framing: Framing;
  /** The connection may carry another request after this response. */
  keepAlive: boolean;
}

/** Header names the client sets itself; a caller's copy would break framing. */
const RESERVED_HEADERS: ReadonlySet<string> = new Set([
  "host",
  "content-length",
  "transfer-encoding",
]);

// RFC 9110 tchar: ALPHA DIGIT and !#$%&'*+-.^_`|~
const TOKEN = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const alnum = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122);
  TOKEN[c] = alnum || "!#$%&'*+-.^_`|~".includes(String.fromCharCode(c))
    ? 1
    : 0;
}

const encoder = new TextEncoder();

/** Header names already checked (a token, not one the client sets): the same few on every request. */
const checkedNames = new Set<string>();
const MAX_CHECKED_NAMES = 1_000;
const UNSAFE_VALUE = /[\r\n\0]/;

/** Encodes the request head and body into one buffer (one write); throws EgressError("protocol") for unsafe headers. */
export function encodeRequest(
  method: string,
  target: Target,
  options: { headers: Array<[string, string]>; body?: Uint8Array },
): Uint8Array {
  if (method !== "POST" && method !== "GET") {
    throw protocol(
      `Cannot send method "${method}": only POST and GET are supported`,
    );
  }
  const url = target.url;
  const path = url.pathname + url.search || "/";
  const name = target.host.includes(":") ? `[${target.host}]` : target.host;
  const defaultPort = target.tls ? 443 : 80;
  const host = target.port === defaultPort ? name : `${name}:${target.port}`;
  let head = `${method} ${path} HTTP/1.1\r\nHost: ${host}\r\n`;
  for (const [key, value] of options.headers) {
    if (!checkedNames.has(key)) checkName(key);
    if (UNSAFE_VALUE.test(value)) {
      throw protocol(
        `Cannot send header "${key}": the value contains CR, LF or NUL`,
      );
    }
    head += `${key}: ${value}\r\n`;
  }
  const body = options.body;
  const bodyBytes = body?.byteLength ?? 0;
  if (body !== undefined || method === "POST") {
    head += `Content-Length: ${bodyBytes}\r\n`;
  }
  head += "\r\n";
  // One buffer, the head encoded straight into it (UTF-8: at most 3 bytes a
  // code unit), then the body after it.
  const out = new Uint8Array(head.length * 3 + bodyBytes);
  const { written } = encoder.encodeInto(head, out);
  if (bodyBytes > 0) out.set(body!, written);
  return out.subarray(0, written + bodyBytes);
}

/** Throws unless `key` is a token the caller may set; remembers it when it is. */
function checkName(key: string): void {
  if (!isToken(key)) {
    throw protocol(
      `Cannot send header "${key}": the name is not a valid token`,
    );
  }
  if (RESERVED_HEADERS.has(key.toLowerCase())) {
    throw protocol(`Cannot send header "${key}": the client sets it itself`);
  }
  if (checkedNames.size >= MAX_CHECKED_NAMES) checkedNames.clear();
  checkedNames.add(key);
}

/** Index of the first CRLFCRLF in bytes at or after `from`, or -1. */
export function findHeadEnd(bytes: Uint8Array, from: number): number {
  let i = bytes.indexOf(13, from);
  while (i !== -1 && i + 3 < bytes.byteLength) {
    if (bytes[i + 1] === 10 && bytes[i + 2] === 13 && bytes[i + 3] === 10) {
      return i;
    }
    i = bytes.indexOf(13, i + 1);
  }
  return -1;
}

/** Parses a status line and header section (without the final CRLFCRLF); throws EgressError("protocol"). */
export function parseHead(bytes: Uint8Array): ResponseHead {
  const lines = latin1(bytes).split("\r\n");
  const statusLine = lines[0]!;
  const minor = statusLine.charCodeAt(7) - 48;
  const status = Number(statusLine.slice(9, 12));
  if (
    !statusLine.startsWith("HTTP/1.") || minor < 0 || minor > 9 ||
    statusLine.charCodeAt(8) !== 32 || !isStatus(statusLine) ||
    (statusLine.length > 12 && statusLine.charCodeAt(12) !== 32)
  ) {
    throw protocol(`Malformed status line "${clip(statusLine)}"`);
  }
  const headers = new Headers();
  let lengths: string[] | null = null;
  let codings: string[] | null = null;
  let close = minor === 0;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    const first = line.charCodeAt(0);
    if (first === 32 || first === 9) {
      throw protocol(`Folded response header line "${clip(line)}" (obs-fold)`);
    }
    const colon = line.indexOf(":");
    const key = line.slice(0, colon);
    if (colon <= 0 || !isToken(key)) {
      throw protocol(`Malformed response header line "${clip(line)}"`);
    }
    const value = trimOws(line.slice(colon + 1));
    if (value.includes("\r") || value.includes("\n") || value.includes("\0")) {
      throw protocol(`Response header "${key}" contains CR, LF or NUL`);
    }
    headers.append(key, value);
    const lower = key.toLowerCase();
    if (lower === "content-length") (lengths ??= []).push(value);
    else if (lower === "transfer-encoding") (codings ??= []).push(value);
    else if (lower === "connection" && hasToken(value, "close")) close = true;
  }
  let framing: Framing;
  if (status === 204 || status === 304 || (status >= 100 && status < 200)) {
    framing = { kind: "none" };
  } else if (codings !== null) {
    // RFC 9112 6.3: Transfer-Encoding wins over Content-Length; chunked must be last.
    const list = codings.join(",").split(",");
    const last = trimOws(list[list.length - 1]!).toLowerCase();
    framing = { kind: last === "chunked" ? "chunked" : "eof" };
    if (lengths !== null || minor === 0) close = true;
  } else if (lengths !== null) {
    framing = { kind: "length", length: contentLength(lengths) };
  } else {
    framing = { kind: "eof" };
  }
  if (framing.kind === "eof") close = true;
  return { status, minor, headers, framing, keepAlive: !close };
}

function contentLength(values: string[]): number {
  let found: string | null = null;
  for (const value of values) {
    for (const raw of value.split(",")) {
      const item = trimOws(raw);
      if (item === "" || item.length > 15 || !isDigits(item)) {
        throw protocol(`Invalid Content-Length "${clip(value)}"`);
      }
      if (found !== null && Number(found) !== Number(item)) {
        throw protocol(
          `Conflicting Content-Length values "${found}" and "${item}"`,
        );
      }
      found = item;
    }
  }
  return Number(found);
}

function isStatus(line: string): boolean {
  if (line.length < 12) return false;
  for (let i = 9; i < 12; i++) {
    const c = line.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return line.charCodeAt(9) !== 48;
}

function isDigits(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}

function isToken(s: string): boolean {
  if (s.length === 0) return false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 128 || TOKEN[c] === 0) return false;
  }
  return true;
}

function hasToken(list: string, token: string): boolean {
  for (const item of list.split(",")) {
    if (trimOws(item).toLowerCase() === token) return true;
  }
  return false;
}

function trimOws(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isOws(s.charCodeAt(start))) start++;
  while (end > start && isOws(s.charCodeAt(end - 1))) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

function isOws(c: number): boolean {
  return c === 32 || c === 9;
}

/** Header bytes are octets: decode each as one code unit (TextDecoder's "latin1" is windows-1252). */
function latin1(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i += 8192) {
    const part = bytes.subarray(i, Math.min(bytes.length, i + 8192));
    out += String.fromCharCode.apply(null, part as unknown as number[]);
  }
  return out;
}

function clip(s: string): string {
  return s.length <= 80 ? s : `${s.slice(0, 80)}…`;
}

function protocol(message: string): EgressError {
  return new EgressError("protocol", message);
}

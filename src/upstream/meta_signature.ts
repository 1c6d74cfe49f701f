import type { Hmac } from "node:crypto";
import { fromHex, nodeCrypto } from "../crypto.ts";

const PREFIX = "sha256=";
const HEADER_REGEXP = /^sha256=([0-9a-f]{64})$/i;
const encoder = new TextEncoder();

/**
 * Meta's escaped-unicode form of a JSON text: every UTF-16 code unit above
 * U+007E becomes `\uXXXX` (lowercase hex), so a surrogate pair becomes two
 * escapes. Meta sends and signs this form (reference §4.2).
 */
export function escapeUnicode(json: string): string {
  return json.replace(
    /[^\0-~]/g,
    (ch) => "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}

/**
 * The X-Hub-Signature-256 value for a body: `sha256=<hex HMAC-SHA256>`.
 * Synchronous node:crypto, not WebCrypto: the simulator signs every status
 * callback, and importing a WebCrypto key per body cost more than the HMAC.
 */
export function signMetaBody(appSecret: string, rawBody: string): string {
  return PREFIX +
    nodeCrypto().createHmac("sha256", appSecret).update(rawBody).digest("hex");
}

/**
 * X-Hub-Signature-256 checked in one streaming pass: feed the raw request
 * bytes to `update` as they arrive, then ask `matches` (constant time).
 * Meta's bodies are already in the escaped-unicode form it signs, so the raw
 * bytes are all there is to hash: no second pass over another form.
 */
export class MetaSignatureCheck {
  readonly #given: Uint8Array | null;
  readonly #hmac: Hmac | null;
  #bytes = 0;

  constructor(appSecret: string | undefined, header: string | null) {
    const hex = HEADER_REGEXP.exec(header?.trim() ?? "")?.[1];
    const ok = !!appSecret && hex !== undefined;
    this.#given = ok ? fromHex(hex) : null;
    this.#hmac = ok ? nodeCrypto().createHmac("sha256", appSecret) : null;
  }

  /** False when no body can match (no secret, header missing or not `sha256=<64 hex>`): skip reading it. */
  get plausible(): boolean {
    return this.#hmac !== null;
  }

  /** Bytes fed so far. */
  get bytes(): number {
    return this.#bytes;
  }

  update(chunk: Uint8Array): void {
    this.#bytes += chunk.length;
    this.#hmac?.update(chunk);
  }

  /** Whether the header is the HMAC of every byte fed; call once, after the last chunk. */
  matches(): boolean {
    if (!this.#hmac || !this.#given) return false;
    return nodeCrypto().timingSafeEqual(this.#hmac.digest(), this.#given);
  }
}

/** One-shot MetaSignatureCheck over a whole body. */
export function verifyMetaSignature(
  appSecret: string | undefined,
  rawBody: Uint8Array | string,
  header: string | null,
): boolean {
  const check = new MetaSignatureCheck(appSecret, header);
  if (!check.plausible) return false;
  check.update(typeof rawBody === "string" ? encoder.encode(rawBody) : rawBody);
  return check.matches();
}

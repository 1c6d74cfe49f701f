type NodeCrypto = typeof import("node:crypto");
let loaded: NodeCrypto | undefined;

/**
 * node:crypto, loaded on first use (synchronously, by process.getBuiltinModule):
 * importing it at start cost about 15 ms of CPU and 3.5 MB, before any request
 * needs a hash. Sync hashing (the bearer token, webhook signatures) calls this.
 */
export function nodeCrypto(): NodeCrypto {
  return loaded ??= process.getBuiltinModule("node:crypto") as NodeCrypto;
}

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const encoder = new TextEncoder();

/** Random base62 text from a uniform distribution (rejection sampling). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
    for (const b of bytes) {
      if (b < 248 && out.length < length) out += BASE62[b % 62];
    }
  }
  return out;
}

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  return Array.from(view, (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * The bytes of an even-length hex text (either case), or null when it is not
 * one. Not node:buffer's Buffer.from(hex, "hex"): importing node:buffer cost
 * about 8 ms at start, and it skips bad digits instead of refusing them.
 */
export function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-f]*$/i.test(hex)) return null;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) {
    out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  }
  return out;
}

/**
 * SHA-256 as hex, synchronously (node:crypto): for short inputs on the hot
 * path (the bearer token of every request, an idempotent request's body),
 * where WebCrypto's digest costs an async hop per call.
 */
export function sha256HexSync(data: string | Uint8Array): string {
  return nodeCrypto().createHash("sha256").update(data).digest("hex");
}

export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return toHex(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
}

export async function hmacSha256Hex(
  key: string | Uint8Array,
  data: string | Uint8Array,
): Promise<string> {
  const k = await crypto.subtle.importKey(
    "raw",
    (typeof key === "string" ? encoder.encode(key) : key) as BufferSource,
    { name: "HMAC", hash: "SHA-256" },
    false,
    ["sign"],
  );
  const bytes = typeof data === "string" ? encoder.encode(data) : data;
  return toHex(await crypto.subtle.sign("HMAC", k, bytes as BufferSource));
}

/** Compares two strings in time independent of where they differ. */
export function safeEqual(a: string, b: string): boolean {
  const ab = encoder.encode(a);
  const bb = encoder.encode(b);
  const { timingSafeEqual } = nodeCrypto();
  if (ab.length !== bb.length) {
    timingSafeEqual(ab, ab);
    return false;
  }
  return timingSafeEqual(ab, bb);
}

/** Opened secrets SecretBox keeps in memory. */
const OPENED_CACHE_LIMIT = 4_096;

/** AES-256-GCM for secrets at rest (channel access tokens); key derived from SECRET_KEY. */
export class SecretBox {
  #key: Promise<CryptoKey> | undefined;
  #missing: string;
  /** Opened secrets by sealed text (a sealed text always opens to the same plaintext). */
  #opened = new Map<string, string>();

  /** Without a secret key, seal and open fail with `missing` (for commands that keep no secret). */
  constructor(secretKey: string | undefined, missing = "No secret key") {
    this.#missing = missing;
    this.#key = secretKey === undefined ? undefined : crypto.subtle.digest(
      "SHA-256",
      encoder.encode(`secret-box:${secretKey}`),
    ).then((raw) =>
      crypto.subtle.importKey("raw", raw, "AES-GCM", false, [
        "encrypt",
        "decrypt",
      ])
    );
  }

  #cryptoKey(): Promise<CryptoKey> {
    if (!this.#key) throw new Error(this.#missing);
    return this.#key;
  }

  async seal(plain: string): Promise<string> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const sealed = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv },
      await this.#cryptoKey(),
      encoder.encode(plain),
    );
    return `v1.${b64(iv)}.${b64(new Uint8Array(sealed))}`;
  }

  async open(sealed: string): Promise<string> {
    const [version, iv, data] = sealed.split(".");
    if (version !== "v1" || !iv || !data) {
      throw new Error("Cannot decrypt secret: unknown format");
    }
    const plain = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: unb64(iv) as BufferSource },
      await this.#cryptoKey(),
      unb64(data) as BufferSource,
    );
    return new TextDecoder().decode(plain);
  }

  /** open() with a small in-memory cache, for secrets read on a hot path (webhook signing). */
  async openCached(sealed: string): Promise<string> {
    const hit = this.#opened.get(sealed);
    if (hit !== undefined) return hit;
    const plain = await this.open(sealed);
    if (this.#opened.size >= OPENED_CACHE_LIMIT) {
      this.#opened.delete(this.#opened.keys().next().value!);
    }
    this.#opened.set(sealed, plain);
    return plain;
  }
}

function b64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function unb64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

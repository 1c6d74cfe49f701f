import { hmacSha256Hex, safeEqual } from "../crypto.ts";

const PREFIX = "sha256=";
const decoder = new TextDecoder();

/**
 * Meta's escaped-unicode form of a JSON text: every UTF-16 code unit above
 * U+007E becomes `\uXXXX` (lowercase hex), so a surrogate pair becomes two
 * escapes. Meta signs this form (reference §4.2).
 */
export function escapeUnicode(json: string): string {
  return json.replace(
    /[^\0-~]/g,
    (ch) => "\\u" + ch.charCodeAt(0).toString(16).padStart(4, "0"),
  );
}

/** The X-Hub-Signature-256 value for a body: `sha256=<hex HMAC-SHA256>`. */
export async function signMetaBody(
  appSecret: string,
  rawBody: string,
): Promise<string> {
  return PREFIX + await hmacSha256Hex(appSecret, rawBody);
}

/**
 * Checks X-Hub-Signature-256 over the raw request bytes in constant time,
 * falling back to the escaped-unicode form of the body (reference §4.2).
 */
export async function verifyMetaSignature(
  appSecret: string,
  rawBody: Uint8Array | string,
  header: string | null,
): Promise<boolean> {
  if (!header || !appSecret) return false;
  const trimmed = header.trim();
  if (!trimmed.toLowerCase().startsWith(PREFIX)) return false;
  const given = trimmed.slice(PREFIX.length).toLowerCase();
  if (safeEqual(given, await hmacSha256Hex(appSecret, rawBody))) return true;
  const text = typeof rawBody === "string" ? rawBody : decoder.decode(rawBody);
  const escaped = escapeUnicode(text);
  if (escaped === text) return false;
  return safeEqual(given, await hmacSha256Hex(appSecret, escaped));
}

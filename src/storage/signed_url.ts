// Server-signed media download URLs for the disk store (S3 presigns its own). Pure crypto, no I/O.
import { hmacSha256Hex, safeEqual } from "../crypto.ts";

export type MediaSignatureCheck = "ok" | "expired" | "invalid";

const EXPIRES_REGEXP = /^\d{1,12}$/;
const SIGNATURE_REGEXP = /^[0-9a-f]{64}$/;

/** `${baseUrl}/media/download/<mediaId>?expires=<unix seconds>&signature=<hmac hex>`. */
export async function signMediaUrl(
  secret: string,
  opts: { baseUrl: string; mediaId: string; expiresAt: Date },
): Promise<string> {
  const expires = Math.floor(opts.expiresAt.getTime() / 1000);
  const signature = await sign(secret, opts.mediaId, String(expires));
  const base = opts.baseUrl.replace(/\/+$/, "");
  return `${base}/media/download/${
    encodeURIComponent(opts.mediaId)
  }?expires=${expires}&signature=${signature}`;
}

/**
 * Checks a download link in constant time. A bad signature is "invalid" even when also expired,
 * so the answer never says whether a forged link would have been in date.
 */
export async function verifyMediaSignature(
  secret: string,
  opts: {
    mediaId: string;
    expires: string | number | null | undefined;
    signature: string | null | undefined;
    now: Date;
  },
): Promise<MediaSignatureCheck> {
  const expires = opts.expires == null ? "" : String(opts.expires);
  const signature = opts.signature ?? "";
  if (!EXPIRES_REGEXP.test(expires) || !SIGNATURE_REGEXP.test(signature)) {
    return "invalid";
  }
  const expected = await sign(secret, opts.mediaId, expires);
  if (!safeEqual(expected, signature)) return "invalid";
  return opts.now.getTime() > Number(expires) * 1000 ? "expired" : "ok";
}

function sign(secret: string, mediaId: string, expires: string) {
  // A key of its own, so this HMAC can never be confused with another use of SECRET_KEY.
  return hmacSha256Hex(`media-url:${secret}`, `${mediaId}.${expires}`);
}

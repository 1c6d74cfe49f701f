import { Buffer } from "node:buffer";
import { createHmac, timingSafeEqual } from "node:crypto";

/** True when X-Service-Signature signs this raw body (a string or bytes) and is at most 5 minutes old. */
export function verifyWebhook(
  secret,
  header,
  rawBody,
  nowSeconds = Math.floor(Date.now() / 1000),
) {
  const fields = header.split(",").map((part) => part.split("=", 2));
  const t = Number(fields.find(([key]) => key === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(nowSeconds - t) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${t}.`).update(rawBody)
    .digest();
  return fields.some(([key, value]) =>
    key === "v1" && /^[0-9a-f]{64}$/.test(value ?? "") &&
    timingSafeEqual(Buffer.from(value, "hex"), expected)
  );
}

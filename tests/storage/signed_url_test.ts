import assert from "node:assert/strict";
import {
  signMediaUrl,
  verifyMediaSignature,
} from "../../src/storage/signed_url.ts";

const SECRET = "s".repeat(40);
const MEDIA_ID = "0193a1b2-0000-7000-8000-000000000001";
const EXPIRES_AT = new Date("2026-11-20T12:05:00.000Z");

async function signed(secret = SECRET) {
  const url = new URL(
    await signMediaUrl(secret, {
      baseUrl: "https://api.example.com/",
      mediaId: MEDIA_ID,
      expiresAt: EXPIRES_AT,
    }),
  );
  return {
    url,
    mediaId: decodeURIComponent(url.pathname.split("/").at(-1)!),
    expires: url.searchParams.get("expires")!,
    signature: url.searchParams.get("signature")!,
  };
}

Deno.test("signMediaUrl builds /media/download/<id> with expires and signature", async () => {
  const { url, expires, signature } = await signed();
  assert.equal(url.origin, "https://api.example.com");
  assert.equal(url.pathname, `/media/download/${MEDIA_ID}`);
  assert.equal(expires, String(EXPIRES_AT.getTime() / 1000));
  assert.match(signature, /^[0-9a-f]{64}$/);
});

Deno.test("verifyMediaSignature accepts a fresh link up to its expiry", async () => {
  const link = await signed();
  for (const now of [new Date("2026-11-20T12:00:00.000Z"), EXPIRES_AT]) {
    assert.equal(await verifyMediaSignature(SECRET, { ...link, now }), "ok");
  }
});

Deno.test("verifyMediaSignature reports an old link as expired", async () => {
  const link = await signed();
  const now = new Date(EXPIRES_AT.getTime() + 1);
  assert.equal(await verifyMediaSignature(SECRET, { ...link, now }), "expired");
});

Deno.test("verifyMediaSignature refuses tampered links", async () => {
  const link = await signed();
  const now = new Date("2026-11-20T12:00:00.000Z");
  const flip = (s: string) => (s[0] === "a" ? "b" : "a") + s.slice(1);
  const tampered = [
    { ...link, mediaId: MEDIA_ID.replace(/1$/, "2") },
    { ...link, expires: String(Number(link.expires) + 3600) },
    { ...link, expires: `0${link.expires}` },
    { ...link, signature: flip(link.signature) },
    { ...link, signature: link.signature.toUpperCase() },
    { ...link, signature: link.signature.slice(0, 63) },
    { ...link, signature: null },
    { ...link, expires: undefined },
    { ...link, expires: "soon" },
  ];
  for (const attempt of tampered) {
    assert.equal(
      await verifyMediaSignature(SECRET, { ...attempt, now }),
      "invalid",
      JSON.stringify(attempt),
    );
  }
  const other = await signed("o".repeat(40));
  assert.equal(
    await verifyMediaSignature(SECRET, { ...other, now }),
    "invalid",
  );
});

Deno.test("verifyMediaSignature calls a forged expired link invalid, not expired", async () => {
  const link = await signed();
  const now = new Date(EXPIRES_AT.getTime() + 60_000);
  const forged = { ...link, signature: "0".repeat(64), now };
  assert.equal(await verifyMediaSignature(SECRET, forged), "invalid");
});

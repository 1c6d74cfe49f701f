import assert from "node:assert/strict";
import { hmacSha256Hex } from "../../src/crypto.ts";
import {
  escapeUnicode,
  signMetaBody,
  verifyMetaSignature,
} from "../../src/upstream/meta_signature.ts";

const SECRET = "app-secret";
const TEXT = "¡Hola! 👋 ñandú";

Deno.test("escapeUnicode escapes every char above U+007E in lowercase, pairs as two escapes", () => {
  assert.equal(
    escapeUnicode(JSON.stringify({ body: TEXT })),
    '{"body":"\\u00a1Hola! \\ud83d\\udc4b \\u00f1and\\u00fa"}',
  );
  assert.equal(escapeUnicode("plain ~ascii~"), "plain ~ascii~");
  assert.equal(escapeUnicode("\u007f"), "\\u007f");
  // The escaped form is still JSON for the same value.
  assert.deepEqual(JSON.parse(escapeUnicode(JSON.stringify({ t: TEXT }))), {
    t: TEXT,
  });
});

Deno.test("signMetaBody returns sha256= and the hex HMAC of the body", async () => {
  const sig = await signMetaBody(SECRET, '{"a":1}');
  assert.equal(sig, `sha256=${await hmacSha256Hex(SECRET, '{"a":1}')}`);
  assert.match(sig, /^sha256=[0-9a-f]{64}$/);
});

Deno.test("verifyMetaSignature accepts an escaped body over its raw bytes", async () => {
  const raw = escapeUnicode(JSON.stringify({ text: { body: TEXT } }));
  assert.ok(!/[^\0-~]/.test(raw));
  const header = await signMetaBody(SECRET, raw);
  assert.equal(
    await verifyMetaSignature(SECRET, new TextEncoder().encode(raw), header),
    true,
  );
  assert.equal(await verifyMetaSignature(SECRET, raw, header), true);
  assert.equal(
    await verifyMetaSignature(
      SECRET,
      raw,
      header.toUpperCase().replace("SHA256=", "sha256="),
    ),
    true,
  );
});

Deno.test("verifyMetaSignature falls back to the escaped form of an unescaped body", async () => {
  const unescaped = JSON.stringify({ text: { body: TEXT } });
  const header = await signMetaBody(SECRET, escapeUnicode(unescaped));
  assert.equal(
    await verifyMetaSignature(
      SECRET,
      new TextEncoder().encode(unescaped),
      header,
    ),
    true,
  );
});

Deno.test("verifyMetaSignature rejects a wrong secret, a missing header and an altered body", async () => {
  const raw = escapeUnicode(JSON.stringify({ text: { body: TEXT } }));
  const header = await signMetaBody(SECRET, raw);
  assert.equal(await verifyMetaSignature("other-secret", raw, header), false);
  assert.equal(await verifyMetaSignature(SECRET, raw, null), false);
  assert.equal(await verifyMetaSignature(SECRET, raw, ""), false);
  assert.equal(
    await verifyMetaSignature(SECRET, raw.replace("Hola", "Hole"), header),
    false,
  );
  assert.equal(
    await verifyMetaSignature(SECRET, raw, header.replace("sha256=", "sha1=")),
    false,
  );
  assert.equal(
    await verifyMetaSignature(SECRET, raw, header.slice(0, -2)),
    false,
  );
  assert.equal(await verifyMetaSignature("", raw, header), false);
});

import assert from "node:assert/strict";
import { hmacSha256Hex } from "../../src/crypto.ts";
import { createHmac } from "node:crypto";
import {
  escapeUnicode,
  MetaSignatureCheck,
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
  const sig = signMetaBody(SECRET, '{"a":1}');
  assert.equal(sig, `sha256=${await hmacSha256Hex(SECRET, '{"a":1}')}`);
  assert.match(sig, /^sha256=[0-9a-f]{64}$/);
});

Deno.test("verifyMetaSignature accepts an escaped body over its raw bytes", async () => {
  const raw = escapeUnicode(JSON.stringify({ text: { body: TEXT } }));
  assert.ok(!/[^\0-~]/.test(raw));
  const header = signMetaBody(SECRET, raw);
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

Deno.test("verifyMetaSignature hashes the raw bytes only: an unescaped body signed in escaped form is refused", () => {
  // Meta sends the escaped form it signs; a body whose escapes were decoded on
  // the way is not what Meta sent, and no second pass over an escaped copy is made.
  const unescaped = JSON.stringify({ text: { body: TEXT } });
  const header = `sha256=${
    createHmac("sha256", SECRET).update(escapeUnicode(unescaped)).digest("hex")
  }`;
  assert.equal(verifyMetaSignature(SECRET, unescaped, header), false);
  assert.equal(
    verifyMetaSignature(SECRET, escapeUnicode(unescaped), header),
    true,
  );
});

Deno.test("MetaSignatureCheck fed chunk by chunk matches the one-shot result and counts each byte once", () => {
  const raw = new TextEncoder().encode(
    escapeUnicode(JSON.stringify({ text: { body: TEXT.repeat(500) } })),
  );
  const header = signMetaBody(SECRET, new TextDecoder().decode(raw));
  for (const size of [1, 7, 4096, raw.length]) {
    const check = new MetaSignatureCheck(SECRET, header);
    assert.ok(check.plausible);
    for (let i = 0; i < raw.length; i += size) {
      check.update(raw.subarray(i, i + size));
    }
    assert.equal(check.bytes, raw.length);
    assert.equal(check.matches(), true, `chunks of ${size}`);
  }
  const forged = new MetaSignatureCheck(SECRET, `sha256=${"ab".repeat(32)}`);
  forged.update(raw.subarray(0, 100));
  forged.update(raw.subarray(100));
  assert.equal(forged.matches(), false);
});

Deno.test("MetaSignatureCheck is implausible without a secret or a sha256=<64 hex> header, so no body needs reading", () => {
  const hex = "0f".repeat(32);
  assert.equal(new MetaSignatureCheck(SECRET, `sha256=${hex}`).plausible, true);
  assert.equal(
    new MetaSignatureCheck(SECRET, ` SHA256=${hex.toUpperCase()} `).plausible,
    true,
  );
  for (
    const header of [
      null,
      "",
      hex,
      `sha1=${hex}`,
      `sha256=${hex.slice(2)}`,
      `sha256=${"zz".repeat(32)}`,
    ]
  ) {
    assert.equal(
      new MetaSignatureCheck(SECRET, header).plausible,
      false,
      String(header),
    );
  }
  assert.equal(
    new MetaSignatureCheck(undefined, `sha256=${hex}`).plausible,
    false,
  );
  assert.equal(new MetaSignatureCheck("", `sha256=${hex}`).plausible, false);
});

Deno.test("verifyMetaSignature rejects a wrong secret, a missing header and an altered body", async () => {
  const raw = escapeUnicode(JSON.stringify({ text: { body: TEXT } }));
  const header = signMetaBody(SECRET, raw);
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

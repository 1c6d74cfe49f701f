import assert from "node:assert/strict";
import { sha256Hex } from "../../src/crypto.ts";
import { signMediaUrl } from "../../src/storage/signed_url.ts";
import {
  customerWrites,
  getMessage,
  type Json,
  messagingTest,
  type Mh,
  newPhone,
} from "./_helpers.ts";

const SECRET_KEY = "test-secret-key-0123456789abcdef-0123456789";

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

/** An inbound image whose download finished; returns the message as GET shows it. */
async function inboundImage(h: Mh, bytes: Uint8Array): Promise<Json> {
  const { message } = await customerWrites(h, newPhone(), {
    type: "image",
    image: { mimeType: "image/jpeg", dataBase64: base64(bytes) },
  });
  return await h.until(async () => {
    const m = await getMessage(h, message.id);
    return m.mediaId && m.mediaKey ? m : null;
  }, "mediaId and mediaKey to be filled");
}

async function download(h: Mh, url: string) {
  const res = await h.app.fetch(new Request(url));
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()) };
}

messagingTest(
  "inbound media is downloaded, described and served with its exact bytes",
  async (h) => {
    const bytes = crypto.getRandomValues(new Uint8Array(4096));
    const message = await inboundImage(h, bytes);
    assert.match(
      message.mediaKey,
      new RegExp(
        `^${h.tenant.account.id}/\\d{4}/\\d{2}/${message.mediaId}$`,
      ),
    );
    const res = await h.request("GET", `/api/v2/media/${message.mediaId}`);
    assert.equal(res.status, 200);
    const media = res.body.data;
    assert.deepEqual(Object.keys(media).sort(), [
      "expiresIn",
      "fileName",
      "id",
      "mimeType",
      "url",
    ]);
    assert.equal(media.id, message.mediaId);
    assert.equal(media.mimeType, "image/jpeg");
    assert.equal(media.fileName, message.content.fileName);
    assert.ok(media.expiresIn > 0 && media.expiresIn <= 600);
    const file = await download(h, media.url);
    assert.equal(file.status, 200);
    assert.equal(await sha256Hex(file.bytes), await sha256Hex(bytes));
    const byKey = await h.request(
      "GET",
      `/api/v2/media/by-key?key=${encodeURIComponent(message.mediaKey)}`,
    );
    assert.equal(byKey.status, 200);
    assert.equal(byKey.body.data.id, message.mediaId);
  },
);

messagingTest("an expired or tampered media URL is 403", async (h) => {
  const message = await inboundImage(h, new Uint8Array(2048).fill(7));
  const { url } = (await h.request("GET", `/api/v2/media/${message.mediaId}`))
    .body.data;
  const expired = await signMediaUrl(SECRET_KEY, {
    baseUrl: "http://localhost",
    mediaId: message.mediaId,
    expiresAt: new Date(Date.now() - 1000),
  });
  const parsed = new URL(url);
  const signature = parsed.searchParams.get("signature")!;
  const flipped = new URL(url);
  flipped.searchParams.set(
    "signature",
    (signature[0] === "a" ? "b" : "a") + signature.slice(1),
  );
  const later = new URL(url);
  later.searchParams.set(
    "expires",
    String(Number(parsed.searchParams.get("expires")) + 3600),
  );
  const unsigned = new URL(url);
  unsigned.searchParams.delete("signature");
  for (const bad of [expired, flipped.href, later.href, unsigned.href]) {
    const res = await download(h, bad);
    assert.equal(res.status, 403, bad);
  }
  const expiredBody = await h.request("GET", expired, { key: null });
  assert.equal(expiredBody.body.error.code, "FORBIDDEN");
  assert.match(expiredBody.body.error.message, /expired/);
  assert.equal((await download(h, url)).status, 200, "the real URL works");
});

messagingTest(
  "media of another account or key prefix is not found",
  async (h) => {
    const message = await inboundImage(h, new Uint8Array(1024).fill(1));
    const other = await h.makeTenant(
      `other-${crypto.randomUUID().slice(0, 8)}`,
    );
    const byId = await h.request("GET", `/api/v2/media/${message.mediaId}`, {
      key: other.key,
    });
    assert.equal(byId.status, 404);
    assert.equal(byId.body.error.code, "MEDIA_NOT_FOUND");
    const foreignKey = await h.request(
      "GET",
      `/api/v2/media/by-key?key=${encodeURIComponent(message.mediaKey)}`,
      { key: other.key },
    );
    assert.equal(foreignKey.status, 404);
    const otherPrefix = message.mediaKey.replace(
      h.tenant.account.id,
      other.account.id,
    );
    const wrongPrefix = await h.request(
      "GET",
      `/api/v2/media/by-key?key=${encodeURIComponent(otherPrefix)}`,
    );
    assert.equal(wrongPrefix.status, 404);
    const unknown = await h.request(
      "GET",
      `/api/v2/media/${crypto.randomUUID()}`,
    );
    assert.equal(unknown.status, 404);
  },
);

messagingTest(
  "media above MEDIA_MAX_BYTES ends failed and is not found",
  async (h) => {
    const { message } = await customerWrites(h, newPhone(), {
      type: "image",
      image: {
        mimeType: "image/jpeg",
        dataBase64: base64(new Uint8Array(4096).fill(9)),
      },
    });
    const media = await h.until(
      () =>
        h.container.db.selectFrom("media").select(["id", "status", "error"])
          .where("message_id", "=", message.id).where("status", "=", "failed")
          .executeTakeFirst(),
      "the media download to fail",
    );
    assert.match(String(media.error), /1024/);
    const res = await h.request("GET", `/api/v2/media/${media.id}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.error.code, "MEDIA_NOT_FOUND");
    assert.match(res.body.error.message, /could not be downloaded/);
    const after = await getMessage(h, message.id);
    assert.equal(after.mediaId, null);
    assert.equal(after.mediaKey, null);
  },
  { env: { MEDIA_MAX_BYTES: "1024" } },
);

messagingTest(
  "a signed media URL is built on PUBLIC_BASE_URL, whatever Host the request names",
  async (h) => {
    const message = await inboundImage(h, new Uint8Array(512).fill(3));
    for (const origin of ["http://localhost", "http://evil.example:8080"]) {
      const res = await h.request(
        "GET",
        `${origin}/api/v2/media/${message.mediaId}`,
        { headers: { "x-forwarded-host": "evil.example" } },
      );
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const url = new URL(res.body.data.url);
      assert.equal(url.origin, "https://media.example.com", origin);
      assert.match(url.pathname, /^\/bm\/media\/download\//);
      // The same link, asked of this server, serves the bytes.
      const file = await download(
        h,
        `http://localhost${url.pathname.slice(3)}${url.search}`,
      );
      assert.equal(file.status, 200);
    }
  },
  { env: { PUBLIC_BASE_URL: "https://media.example.com/bm/" } },
);

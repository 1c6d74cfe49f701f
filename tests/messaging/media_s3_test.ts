import assert from "node:assert/strict";
import { startS3rver } from "../_support/s3rver.ts";
import { createMessagingHarness } from "../_support/messaging.ts";
import { sha256Hex } from "../../src/crypto.ts";

Deno.test({
  name:
    "inbound media lands in S3 and GET /media/:id presigns a URL that serves its bytes",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const s3 = await startS3rver();
    try {
      await using h = await createMessagingHarness({
        env: {
          MEDIA_STORE: `s3://${s3.bucket}/inbound`,
          S3_ENDPOINT: s3.endpoint,
          S3_ACCESS_KEY_ID: s3.accessKeyId,
          S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
        },
      });
      const bytes = crypto.getRandomValues(new Uint8Array(8192));
      const { wamid } = await h.inbound({
        from: "+5491133334444",
        type: "image",
        image: {
          mimeType: "image/png",
          dataBase64: btoa(String.fromCharCode(...bytes)),
        },
      });
      const row = await h.until(
        () =>
          h.container.db.selectFrom("messages").select([
            "id",
            "media_id",
            "media_key",
          ])
            .where("wa_message_id", "=", wamid).where(
              "media_id",
              "is not",
              null,
            )
            .executeTakeFirst(),
        "the media download to finish",
      );
      const res = await h.request("GET", `/api/v2/media/${row.media_id}`);
      assert.equal(res.status, 200);
      assert.equal(res.body.data.mimeType, "image/png");
      const url = new URL(res.body.data.url);
      assert.equal(
        url.origin,
        new URL(s3.endpoint).origin,
        "served by S3, not by us",
      );
      assert.ok(url.searchParams.get("X-Amz-Signature"), "presigned");
      const download = await fetch(url);
      assert.equal(download.status, 200);
      const got = new Uint8Array(await download.arrayBuffer());
      assert.equal(await sha256Hex(got), await sha256Hex(bytes));
      // Without the signature S3 refuses it.
      const bare = await fetch(`${url.origin}${url.pathname}`);
      await bare.body?.cancel();
      assert.equal(bare.status, 403);
    } finally {
      await s3.stop();
    }
  },
});

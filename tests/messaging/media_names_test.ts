import assert from "node:assert/strict";
import { createMessagingHarness } from "../_support/messaging.ts";

Deno.test({
  name:
    "a document with a non-Latin file name downloads with an RFC 5987 Content-Disposition",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await using h = await createMessagingHarness();
    const bytes = new TextEncoder().encode("%PDF-1.4 test");
    const { wamid } = await h.inbound({
      from: "+5491166667777",
      type: "document",
      document: {
        mimeType: "application/pdf",
        dataBase64: btoa(String.fromCharCode(...bytes)),
        filename: "договор 📄.pdf",
      },
    });
    const row = await h.until(
      () =>
        h.container.db.selectFrom("messages").select(["media_id"])
          .where("wa_message_id", "=", wamid).where("media_id", "is not", null)
          .executeTakeFirst(),
      "the media download",
    );
    const described = await h.request("GET", `/api/v2/media/${row.media_id}`);
    assert.equal(described.body.data.fileName, "договор 📄.pdf");
    const res = await fetch(
      described.body.data.url.replace("http://localhost", h.baseUrl),
    );
    assert.equal(res.status, 200);
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    const disposition = res.headers.get("content-disposition") ?? "";
    assert.match(
      disposition,
      /^attachment; filename="[\x20-\x7e]+"; filename\*=UTF-8''/,
    );
    assert.equal(
      decodeURIComponent(disposition.split("filename*=UTF-8''")[1]!),
      "договор 📄.pdf",
    );
  },
});

import assert from "node:assert/strict";
import { AppError } from "../../src/errors.ts";
import { createS3BlobStore } from "../../src/storage/s3_blob_store.ts";
import { startS3rver } from "../_support/s3rver.ts";
import { freePort } from "../_support/wait.ts";

const KEY = "acc_1/2026/11/0193a1b2-0000-7000-8000-000000000001";
const BYTES = new TextEncoder().encode("%PDF-1.7 not really a pdf");

async function fetchText(
  url: string,
): Promise<{ status: number; body: string; headers: Headers }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.text(), headers: res.headers };
}

function isAppError(code: string, retryable: boolean) {
  return (err: unknown) => {
    assert.ok(err instanceof AppError, String(err));
    assert.equal(err.code, code);
    assert.equal(err.retryable, retryable);
    return true;
  };
}

Deno.test("S3 blob store presigned URLs against s3rver", async (t) => {
  const s3 = await startS3rver();
  const opts = { ...s3, region: "us-east-1", prefix: "media" };
  const store = createS3BlobStore(opts);
  try {
    await store.put(KEY, BYTES, { contentType: "application/pdf" });

    await t.step(
      "a presigned URL serves the bytes to a plain fetch",
      async () => {
        const url = await store.presignGet(KEY, { expiresInSeconds: 300 });
        assert.ok(url);
        assert.match(url, /X-Amz-Expires=300/);
        const res = await fetch(url);
        assert.equal(res.status, 200);
        assert.deepEqual(new Uint8Array(await res.arrayBuffer()), BYTES);
        assert.equal(res.headers.get("content-type"), "application/pdf");
      },
    );

    await t.step("the object URL without a signature is refused", async () => {
      const url = new URL(
        (await store.presignGet(KEY, { expiresInSeconds: 300 }))!,
      );
      const res = await fetchText(`${url.origin}${url.pathname}`);
      assert.equal(res.status, 403);
      assert.match(res.body, /AccessDenied/);
    });

    await t.step(
      "a file name becomes Content-Disposition and a type overrides Content-Type",
      async () => {
        const url = await store.presignGet(KEY, {
          expiresInSeconds: 60,
          fileName: 'Factura "marzo" ñ.pdf',
          contentType: "application/octet-stream",
        });
        const res = await fetchText(url!);
        assert.equal(res.status, 200);
        assert.equal(
          res.headers.get("content-disposition"),
          `attachment; filename="Factura _marzo_ _.pdf"; filename*=UTF-8''Factura%20%22marzo%22%20%C3%B1.pdf`,
        );
        assert.equal(
          res.headers.get("content-type"),
          "application/octet-stream",
        );
      },
    );

    await t.step("a URL presigned in the past has expired", async () => {
      const past = createS3BlobStore({
        ...opts,
        clock: { now: () => new Date(Date.now() - 2 * 3600_000) },
      });
      const url = await past.presignGet(KEY, { expiresInSeconds: 60 });
      const res = await fetchText(url!);
      assert.equal(res.status, 403);
      assert.match(res.body, /Request has expired/);
    });

    await t.step(
      "a tampered signature, lifetime or key is refused",
      async () => {
        const url = new URL(
          (await store.presignGet(KEY, { expiresInSeconds: 60 }))!,
        );
        const signature = url.searchParams.get("X-Amz-Signature")!;
        const flipped = new URL(url);
        flipped.searchParams.set(
          "X-Amz-Signature",
          (signature[0] === "0" ? "1" : "0") + signature.slice(1),
        );
        const longer = new URL(url);
        longer.searchParams.set("X-Amz-Expires", "604800");
        const otherKey = new URL(url);
        otherKey.pathname = otherKey.pathname.replace(/1$/, "2");
        await store.put(KEY.replace(/1$/, "2"), BYTES, {
          contentType: "application/pdf",
        });
        for (const tampered of [flipped, longer, otherKey]) {
          const res = await fetchText(tampered.toString());
          assert.equal(res.status, 403, tampered.toString());
          assert.match(res.body, /SignatureDoesNotMatch/);
        }
        assert.equal((await fetchText(url.toString())).status, 200);
      },
    );

    await t.step("the prefix is part of the object key", async () => {
      const bare = createS3BlobStore({ ...opts, prefix: undefined });
      assert.deepEqual((await bare.get(`media/${KEY}`))?.bytes, BYTES);
      assert.equal(await bare.get(KEY), null);
    });

    await t.step("a lifetime outside 1 s to 7 days is rejected", async () => {
      for (const expiresInSeconds of [0, 1.5, 604_801]) {
        await assert.rejects(
          () => store.presignGet(KEY, { expiresInSeconds }),
          isAppError("VALIDATION_ERROR", false),
        );
      }
    });

    await t.step("a wrong secret is refused and is not retried", async () => {
      const wrong = createS3BlobStore({ ...opts, secretAccessKey: "WRONG" });
      await assert.rejects(
        () => wrong.put(KEY, BYTES, { contentType: "application/pdf" }),
        isAppError("INTERNAL_ERROR", false),
      );
      await assert.rejects(
        () => wrong.get(KEY),
        isAppError("INTERNAL_ERROR", false),
      );
      assert.deepEqual((await store.get(KEY))?.bytes, BYTES);
    });

    await t.step("a missing bucket fails the put", async () => {
      const missing = createS3BlobStore({ ...opts, bucket: "no-such-bucket" });
      await assert.rejects(
        () => missing.put(KEY, BYTES, { contentType: "application/pdf" }),
        /bucket "no-such-bucket" does not exist/,
      );
    });
  } finally {
    await s3.stop();
  }
});

Deno.test("S3 blob store reports an unreachable endpoint as retryable", async () => {
  const store = createS3BlobStore({
    endpoint: `http://127.0.0.1:${freePort()}`,
    region: "us-east-1",
    bucket: "media",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
  });
  await assert.rejects(
    () => store.get(KEY),
    isAppError("SERVICE_UNAVAILABLE", true),
  );
});

Deno.test("S3 blob store refuses a malformed bucket name", () => {
  assert.throws(
    () =>
      createS3BlobStore({
        endpoint: "http://127.0.0.1:1",
        region: "us-east-1",
        bucket: "Bad_Bucket",
        accessKeyId: "a",
        secretAccessKey: "b",
      }),
    isAppError("VALIDATION_ERROR", false),
  );
});

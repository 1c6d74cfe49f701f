// One table of behaviours, run against the disk store and against a real s3rver.
import assert from "node:assert/strict";
import { AppError } from "../../src/errors.ts";
import type { BlobProducer, BlobStore } from "../../src/storage/blob_store.ts";
import { createDiskBlobStore } from "../../src/storage/disk_blob_store.ts";
import { createS3BlobStore } from "../../src/storage/s3_blob_store.ts";
import { startS3rver } from "../_support/s3rver.ts";

const text = (s: string) => new TextEncoder().encode(s);

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65_536) {
    crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65_536)));
  }
  return out;
}
const KEY = "acc_1/2026/11/0193a1b2-0000-7000-8000-000000000001";

/**
 * Produces the bytes in odd-sized chunks (none lines up with an S3 part), all
 * through one reused buffer: a store that kept a chunk past its write would
 * end up with the wrong bytes.
 */
function producerOf(
  bytes: Uint8Array,
  options: { failAfter?: number } = {},
): BlobProducer {
  return async (write) => {
    const scratch = new Uint8Array(65_537);
    for (let offset = 0; offset < bytes.length; offset += scratch.length) {
      if (options.failAfter !== undefined && offset >= options.failAfter) {
        throw new Error("the source broke");
      }
      const chunk = bytes.subarray(offset, offset + scratch.length);
      scratch.set(chunk);
      await write(scratch.subarray(0, chunk.length));
    }
  };
}

async function opened(store: BlobStore, key: string) {
  const blob = await store.open(key);
  assert.ok(blob, `open("${key}") found nothing`);
  const bytes = new Uint8Array(await new Response(blob.body).arrayBuffer());
  return { bytes, size: blob.size, contentType: blob.contentType };
}

const BEHAVIOURS: Record<string, (store: BlobStore) => Promise<void>> = {
  "put then get returns the bytes and content type": async (store) => {
    const bytes = randomBytes(200_000);
    await store.put(KEY, bytes, { contentType: "image/png" });
    const got = await store.get(KEY);
    assert.deepEqual(got, { bytes, contentType: "image/png" });
  },
  "a produced put stores every byte, small (one PUT) or over 5 MiB (multipart on S3)":
    async (store) => {
      for (const size of [100_000, 11 * 1024 * 1024 + 3]) {
        const bytes = randomBytes(size);
        await store.put(KEY, producerOf(bytes), { contentType: "video/mp4" });
        assert.deepEqual(await opened(store, KEY), {
          bytes,
          size,
          contentType: "video/mp4",
        }, `${size} bytes`);
      }
    },
  "a producer that fails midway publishes nothing and keeps the old blob":
    async (
      store,
    ) => {
      await store.put(KEY, text("old"), { contentType: "text/plain" });
      for (const size of [100_000, 11 * 1024 * 1024]) {
        await assert.rejects(
          store.put(
            KEY,
            producerOf(randomBytes(size), { failAfter: size / 2 }),
            {
              contentType: "video/mp4",
            },
          ),
          /the source broke/,
        );
        assert.deepEqual((await store.get(KEY))?.bytes, text("old"));
      }
    },
  "open streams the bytes and a missing key opens as null": async (store) => {
    const bytes = randomBytes(300_000);
    await store.put(KEY, bytes, { contentType: "image/png" });
    assert.deepEqual(await opened(store, KEY), {
      bytes,
      size: bytes.length,
      contentType: "image/png",
    });
    assert.equal(await store.open("acc_1/2026/11/missing"), null);
  },
  "stat reports size and content type without the bytes": async (store) => {
    await store.put(KEY, text("hello"), { contentType: "text/plain" });
    assert.deepEqual(await store.stat(KEY), {
      key: KEY,
      size: 5,
      contentType: "text/plain",
    });
  },
  "an empty blob is stored and read back": async (store) => {
    await store.put(KEY, new Uint8Array(0), { contentType: "audio/ogg" });
    assert.deepEqual(await store.get(KEY), {
      bytes: new Uint8Array(0),
      contentType: "audio/ogg",
    });
    assert.equal((await store.stat(KEY))?.size, 0);
  },
  "put replaces an existing blob and its content type": async (store) => {
    await store.put(KEY, text("first version"), { contentType: "text/plain" });
    await store.put(KEY, text("v2"), { contentType: "application/pdf" });
    assert.deepEqual(await store.get(KEY), {
      bytes: text("v2"),
      contentType: "application/pdf",
    });
    assert.equal((await store.stat(KEY))?.size, 2);
  },
  "a missing key reads as null": async (store) => {
    assert.equal(await store.get("acc_1/2026/11/missing"), null);
    assert.equal(await store.stat("acc_1/2026/11/missing"), null);
  },
  "delete removes the blob and a second delete is not an error": async (
    store,
  ) => {
    await store.put(KEY, text("bye"), { contentType: "text/plain" });
    await store.delete(KEY);
    assert.equal(await store.get(KEY), null);
    assert.equal(await store.stat(KEY), null);
    await store.delete(KEY);
  },
  "keys of different accounts do not overlap": async (store) => {
    await store.put("acc_a/2026/11/m1", text("a"), {
      contentType: "text/plain",
    });
    await store.put("acc_b/2026/11/m1", text("b"), {
      contentType: "text/plain",
    });
    assert.deepEqual((await store.get("acc_a/2026/11/m1"))?.bytes, text("a"));
    assert.deepEqual((await store.get("acc_b/2026/11/m1"))?.bytes, text("b"));
  },
  "keys that could escape the store are rejected": async (store) => {
    const bad = [
      "a/../b",
      "../etc/passwd",
      "/abs",
      "a//b",
      "a/",
      "a\\b",
      "..",
      "a/./b",
      "",
      "a/.hidden",
    ];
    for (const key of bad) {
      for (
        const attempt of [
          () => store.put(key, text("x"), { contentType: "text/plain" }),
          () => store.get(key),
          () => store.stat(key),
          () => store.delete(key),
          () => store.presignGet(key, { expiresInSeconds: 60 }),
        ]
      ) {
        await assert.rejects(attempt, (err: unknown) => {
          assert.ok(err instanceof AppError, `${key}: ${err}`);
          assert.equal(err.code, "VALIDATION_ERROR");
          return true;
        }, `key "${key}" was accepted`);
      }
    }
  },
};

async function runAll(t: Deno.TestContext, store: BlobStore): Promise<void> {
  for (const [name, behaviour] of Object.entries(BEHAVIOURS)) {
    await t.step(name, () => behaviour(store));
  }
}

Deno.test("disk blob store", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "blobs-" });
  try {
    await runAll(t, createDiskBlobStore(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("S3 blob store against s3rver", async (t) => {
  const s3 = await startS3rver();
  try {
    await runAll(
      t,
      createS3BlobStore({ ...s3, region: "us-east-1", prefix: "media" }),
    );
  } finally {
    await s3.stop();
  }
});

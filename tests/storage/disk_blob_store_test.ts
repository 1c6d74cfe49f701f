import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../../src/crypto.ts";
import { createDiskBlobStore } from "../../src/storage/disk_blob_store.ts";

const KEY = "acc_1/2026/11/0193a1b2-0000-7000-8000-000000000001";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "blobs-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

function filled(size: number, seed: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < size; i++) out[i] = (i * 31 + seed) & 0xff;
  return out;
}

async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.isDirectory) {
      out.push(
        ...(await listFiles(join(dir, entry.name))).map((f) =>
          `${entry.name}/${f}`
        ),
      );
    } else out.push(entry.name);
  }
  return out.sort();
}

Deno.test("disk blob store: a reader during many puts never sees a partial blob", async () => {
  await withDir(async (dir) => {
    const store = createDiskBlobStore(dir);
    const versions = [
      { bytes: filled(1_500_000, 1), contentType: "video/mp4" },
      { bytes: filled(300_000, 2), contentType: "image/jpeg" },
      { bytes: filled(2_500_000, 3), contentType: "application/pdf" },
    ];
    const expected = new Map<string, string>();
    for (const v of versions) {
      expected.set(await sha256Hex(v.bytes), v.contentType);
    }
    await store.put(KEY, versions[0]!.bytes, { contentType: "video/mp4" });

    let writing = true;
    const writer = (async () => {
      try {
        for (let i = 0; i < 60; i++) {
          const v = versions[i % versions.length]!;
          await store.put(KEY, v.bytes, { contentType: v.contentType });
        }
      } finally {
        writing = false;
      }
    })();
    const seen = new Set<string>();
    let reads = 0;
    while (writing) {
      const got = await store.get(KEY);
      assert.ok(got, "the blob vanished during an overwrite");
      const hash = await sha256Hex(got.bytes);
      assert.ok(
        expected.has(hash),
        `read ${got.bytes.length} bytes matching no version`,
      );
      // The content type travels with the bytes: never an old type on new bytes.
      assert.equal(got.contentType, expected.get(hash));
      seen.add(hash);
      reads++;
    }
    await writer;
    assert.ok(reads > 0);
    assert.deepEqual(await listFiles(dir), [
      `acc_1/2026/11/${KEY.split("/")[3]}`,
    ]);
  });
});

Deno.test("disk blob store: blobs live at their key under the root and leave no temp files", async () => {
  await withDir(async (dir) => {
    const store = createDiskBlobStore(dir);
    await store.put(KEY, filled(10, 0), { contentType: "text/plain" });
    await store.put("acc_2/2026/12/m2", filled(10, 0), {
      contentType: "text/plain",
    });
    assert.deepEqual(
      await listFiles(dir),
      [
        KEY,
        "acc_2/2026/12/m2",
      ].sort(),
    );
  });
});

Deno.test("disk blob store: a directory in the key space is not a blob", async () => {
  await withDir(async (dir) => {
    const store = createDiskBlobStore(dir);
    await store.put(KEY, filled(10, 0), { contentType: "text/plain" });
    assert.equal(await store.get("acc_1/2026"), null);
    assert.equal(await store.stat("acc_1/2026"), null);
    assert.equal(await store.get(`${KEY}/below`), null);
    assert.equal(await store.stat(`${KEY}/below`), null);
  });
});

Deno.test("disk blob store: a file not written by the store is refused, not served", async () => {
  await withDir(async (dir) => {
    const store = createDiskBlobStore(dir);
    await Deno.mkdir(join(dir, "acc_1"), { recursive: true });
    await Deno.writeTextFile(
      join(dir, "acc_1", "stray"),
      "plain text, no header",
    );
    await assert.rejects(() => store.get("acc_1/stray"), /no valid header/);
    await assert.rejects(() => store.stat("acc_1/stray"), /no valid header/);
  });
});

Deno.test("disk blob store: presignGet returns null (the server signs disk URLs)", async () => {
  await withDir(async (dir) => {
    const store = createDiskBlobStore(dir);
    assert.equal(await store.presignGet(KEY, { expiresInSeconds: 300 }), null);
  });
});

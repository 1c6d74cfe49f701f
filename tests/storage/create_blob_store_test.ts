import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { createBlobStore } from "../../src/storage/create_blob_store.ts";
import { createLogger } from "../../src/log.ts";
import { isPartMissing, ProgramParts } from "../../src/program_parts.ts";

const NO_S3 = {
  endpoint: undefined,
  region: "us-east-1",
  accessKeyId: undefined,
  secretAccessKey: undefined,
};
const S3 = {
  endpoint: "http://127.0.0.1:9000",
  region: "eu-west-1",
  accessKeyId: "key",
  secretAccessKey: "secret",
};

Deno.test("createBlobStore takes the default Config as is and stores on disk", async () => {
  const dir = await Deno.makeTempDir({ prefix: "blobs-" });
  try {
    const config = loadConfig({ DATA_DIR: dir });
    const store = createBlobStore(config);
    assert.equal(store.kind, "disk");
    await store.put("acc/2026/11/m", new Uint8Array([1, 2]), {
      contentType: "image/png",
    });
    const entries = [...Deno.readDirSync(`${dir}/media/acc/2026/11`)].map((e) =>
      e.name
    );
    assert.deepEqual(entries, ["m"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createBlobStore reads file:///abs as an absolute directory", async () => {
  const dir = await Deno.makeTempDir({ prefix: "blobs-" });
  try {
    const store = createBlobStore({ mediaStore: `file://${dir}/m`, s3: NO_S3 });
    await store.put("a/b", new Uint8Array([1]), { contentType: "text/plain" });
    assert.ok(Deno.statSync(`${dir}/m/a/b`).isFile);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createBlobStore builds an S3 store from s3://bucket/prefix", async () => {
  const seen: string[] = [];
  const store = createBlobStore({
    mediaStore: "s3://media-bucket/prod/media",
    s3: S3,
  }, {
    fetch: (input) => {
      seen.push(new Request(input).url);
      return Promise.resolve(new Response(null, { status: 404 }));
    },
  });
  assert.equal(store.kind, "s3");
  assert.equal(await store.get("acc/2026/11/m"), null);
  assert.deepEqual(seen, [
    "http://127.0.0.1:9000/media-bucket/prod/media/acc/2026/11/m",
  ]);
  const url = new URL(
    (await store.presignGet("acc/2026/11/m", { expiresInSeconds: 300 }))!,
  );
  assert.match(
    url.searchParams.get("X-Amz-Credential")!,
    /^key\/\d{8}\/eu-west-1\/s3\/aws4_request$/,
  );
});

Deno.test("createBlobStore names the missing S3 settings", () => {
  assert.throws(
    () =>
      createBlobStore({
        mediaStore: "s3://media",
        s3: { ...NO_S3, accessKeyId: "key" },
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      assert.equal(
        err.message,
        'Cannot use MEDIA_STORE "s3://media": set S3_ENDPOINT, S3_SECRET_ACCESS_KEY',
      );
      return true;
    },
  );
});

Deno.test("createBlobStore rejects malformed MEDIA_STORE values", () => {
  for (
    const [mediaStore, why] of [
      ["ftp://x", /must be "file:<dir>" or "s3:\/\/<bucket>\/<prefix>"/],
      ["file:", /the directory is missing/],
      ["s3://", /the bucket is missing/],
      ["s3://Bad_Bucket/x", /Invalid S3 bucket name "Bad_Bucket"/],
      ["s3://media/../x", /Invalid storage key/],
    ] as const
  ) {
    assert.throws(
      () => createBlobStore({ mediaStore, s3: S3 }),
      (err: unknown) => {
        assert.ok(err instanceof ConfigError, mediaStore);
        assert.match(err.message, why);
        return true;
      },
    );
  }
});

Deno.test("the S3 store's module is loaded as a part of the program: a failed import is a missing part, and the next call loads it again", async () => {
  const parts = new ProgramParts(createLogger("silent"));
  // The first load imports a module that is not there (as a chunk deleted
  // under the server), the next ones the real one.
  const gone = new URL("./no_such_store.ts", import.meta.url).href;
  let loads = 0;
  const store = createBlobStore({ mediaStore: "s3://bucket/media", s3: S3 }, {
    parts: {
      load: (part, load) =>
        parts.load(part, loads++ ? load : () => import(gone)),
    },
  });
  await assert.rejects(
    store.presignGet("a/b", { expiresInSeconds: 60 }),
    (err) => isPartMissing(err),
  );
  assert.equal(parts.broken, true);
  const url = await store.presignGet("a/b", { expiresInSeconds: 60 });
  assert.match(
    String(url),
    /^http:\/\/127\.0\.0\.1:9000\/bucket\/media\/a\/b\?/,
  );
  assert.equal(loads, 2);
  assert.equal(parts.broken, false);
});

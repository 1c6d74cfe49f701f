import { ConfigError } from "../config.ts";
import type { BlobStore } from "./blob_store.ts";
import { loadOnce, type ProgramParts } from "../program_parts.ts";
import { createDiskBlobStore } from "./disk_blob_store.ts";
import { checkS3Options, type S3BlobStoreOptions } from "./s3_options.ts";

/** The part of Config the blob store reads (Config itself fits). */
export interface BlobStoreConfig {
  /** `file:<dir>` or `s3://bucket/prefix`. */
  readonly mediaStore: string;
  readonly s3: {
    readonly endpoint: string | undefined;
    readonly region: string;
    readonly accessKeyId: string | undefined;
    readonly secretAccessKey: string | undefined;
  };
}

export interface CreateBlobStoreOptions {
  fetch?: typeof fetch;
  clock?: { now(): Date };
  /** Loads the S3 store's module (see program_parts.ts); a plain import without. */
  parts?: Pick<ProgramParts, "load">;
}

/** Builds the store MEDIA_STORE names; throws ConfigError when it is malformed or S3 settings are missing. */
export function createBlobStore(
  config: BlobStoreConfig,
  opts: CreateBlobStoreOptions = {},
): BlobStore {
  const target = config.mediaStore.trim();
  if (target.startsWith("file:")) {
    // `file:./data/media`, `file:/var/media` and `file:///var/media` all name a directory.
    const dir = target.slice("file:".length).replace(/^\/\/(?=\/)/, "");
    if (dir === "") throw storeError(target, "the directory is missing");
    return createDiskBlobStore(dir);
  }
  if (target.startsWith("s3://")) {
    const [bucket = "", ...rest] = target.slice("s3://".length).split("/");
    if (bucket === "") throw storeError(target, "the bucket is missing");
    const { endpoint, region, accessKeyId, secretAccessKey } = config.s3;
    const missing = [
      endpoint ? null : "S3_ENDPOINT",
      accessKeyId ? null : "S3_ACCESS_KEY_ID",
      secretAccessKey ? null : "S3_SECRET_ACCESS_KEY",
    ].filter((name) => name !== null);
    if (!endpoint || !accessKeyId || !secretAccessKey) {
      throw storeError(target, `set ${missing.join(", ")}`);
    }
    try {
      return lazyS3BlobStore({
        endpoint,
        region,
        bucket,
        prefix: rest.join("/"),
        accessKeyId,
        secretAccessKey,
        fetch: opts.fetch,
        clock: opts.clock,
      }, opts.parts);
    } catch (err) {
      throw storeError(target, (err as Error).message);
    }
  }
  throw storeError(
    target,
    'it must be "file:<dir>" or "s3://<bucket>/<prefix>"',
  );
}

/**
 * The S3 store, its module (and aws4fetch) imported on first use so a server
 * with media on disk never loads them; the options are checked now.
 */
function lazyS3BlobStore(
  opts: S3BlobStoreOptions,
  parts: Pick<ProgramParts, "load"> | undefined,
): BlobStore {
  checkS3Options(opts);
  const module = () => import("./s3_blob_store.ts");
  const load = loadOnce(() =>
    (parts ? parts.load("S3 media store", module) : module())
      .then((m) => m.createS3BlobStore(opts))
  );
  return {
    kind: "s3",
    put: async (key, body, o) => (await load()).put(key, body, o),
    get: async (key) => (await load()).get(key),
    open: async (key) => (await load()).open(key),
    stat: async (key) => (await load()).stat(key),
    delete: async (key) => (await load()).delete(key),
    presignGet: async (key, o) => (await load()).presignGet(key, o),
  };
}

function storeError(target: string, why: string): ConfigError {
  return new ConfigError(`Cannot use MEDIA_STORE "${target}": ${why}`);
}

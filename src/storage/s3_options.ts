import { AppError } from "../errors.ts";
import { assertBlobKey } from "./blob_store.ts";

export interface S3BlobStoreOptions {
  /** Service root, e.g. `https://s3.eu-west-1.amazonaws.com` or `http://127.0.0.1:9000` (MinIO, s3rver). */
  endpoint: string;
  region: string;
  bucket: string;
  /** Prepended to every key, e.g. `media` stores `acc/2026/11/id` as `media/acc/2026/11/id`. */
  prefix?: string;
  accessKeyId: string;
  secretAccessKey: string;
  fetch?: typeof fetch;
  /** Time the presigned URLs start from; tests inject one to mint already expired URLs. */
  clock?: { now(): Date };
}

const BUCKET_REGEXP = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Checks the bucket name and the key prefix (without loading the S3 client,
 * so a bad MEDIA_STORE fails at start); returns the prefix keys get
 * (`media/`, or empty).
 */
export function checkS3Options(opts: S3BlobStoreOptions): string {
  if (!BUCKET_REGEXP.test(opts.bucket)) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Invalid S3 bucket name "${opts.bucket}"`,
    );
  }
  const trimmed = (opts.prefix ?? "").replace(/^\/+|\/+$/g, "");
  if (trimmed === "") return "";
  assertBlobKey(trimmed);
  return `${trimmed}/`;
}

import { AppError } from "../errors.ts";

export interface BlobInfo {
  key: string;
  size: number;
  contentType: string | null;
}

/**
 * Produces a blob's bytes by calling `write` for each chunk in order; the store is done with a chunk when
 * its write settles (so the producer may reuse the buffer). Throwing publishes nothing.
 */
export type BlobProducer = (
  write: (chunk: Uint8Array) => Promise<void>,
) => Promise<void>;

/** A blob's bytes in one piece, or produced chunk by chunk and written as they come (never held whole). */
export type BlobBody = Uint8Array | BlobProducer;

/** Where media bytes live: a directory on disk or an S3-compatible bucket. */
export interface BlobStore {
  readonly kind: "disk" | "s3";
  /** Writes atomically: readers never see a partial object, and a producer that throws publishes nothing. */
  put(
    key: string,
    body: BlobBody,
    opts: { contentType: string },
  ): Promise<void>;
  get(
    key: string,
  ): Promise<{ bytes: Uint8Array; contentType: string | null } | null>;
  /** The bytes as a stream (for serving without holding the file); the reader must consume or cancel it. */
  open(key: string): Promise<BlobStream | null>;
  stat(key: string): Promise<BlobInfo | null>;
  /** Deleting a missing key is not an error. */
  delete(key: string): Promise<void>;
  /** For S3: a presigned GET URL valid for expiresInSeconds; for disk: null (the server signs its own URL). */
  presignGet(
    key: string,
    opts: { expiresInSeconds: number; fileName?: string; contentType?: string },
  ): Promise<string | null>;
}

export interface BlobStream {
  body: ReadableStream<Uint8Array>;
  size: number;
  contentType: string | null;
}

const MAX_KEY_LENGTH = 512;
// A segment starts with a letter or digit, so "." and ".." (and hidden or temp files) can never be named.
const SEGMENT_REGEXP = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Rejects any key that could leave the store's root: `..`, absolute paths, backslashes, empty segments.
 * Keys look like `<accountId>/<yyyy>/<mm>/<mediaId>` (DESIGN.md §3).
 */
export function assertBlobKey(key: string): void {
  const problem = blobKeyProblem(key);
  if (problem) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Invalid storage key "${key.slice(0, MAX_KEY_LENGTH)}": ${problem}`,
    );
  }
}

function blobKeyProblem(key: string): string | null {
  if (key.length === 0) return "it is empty";
  if (key.length > MAX_KEY_LENGTH) {
    return `it is longer than ${MAX_KEY_LENGTH} characters`;
  }
  if (key.includes("\\")) return "it contains a backslash";
  if (key.includes("..")) return 'it contains ".."';
  if (key.startsWith("/")) return "it is an absolute path";
  const segments = key.split("/");
  if (segments.some((s) => s === "")) return "it has an empty segment";
  if (!segments.every((s) => SEGMENT_REGEXP.test(s))) {
    return "segments may only hold letters, digits, '.', '_' and '-' and must start with a letter or digit";
  }
  return null;
}

/** Checks a presign lifetime: S3 accepts 1 second to 7 days. */
export function assertExpiresIn(seconds: number): void {
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 604_800) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Invalid URL lifetime "${seconds}": must be a whole number of seconds from 1 to 604800`,
    );
  }
}

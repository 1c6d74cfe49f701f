import { AwsClient } from "aws4fetch";
import { contentDisposition } from "./content_disposition.ts";
import { createHash } from "node:crypto";
import { AppError } from "../errors.ts";
import {
  assertBlobKey,
  assertExpiresIn,
  type BlobStore,
} from "./blob_store.ts";
import { checkS3Options, type S3BlobStoreOptions } from "./s3_options.ts";

export type { S3BlobStoreOptions };

interface Multipart {
  /** Uploads the next part; the buffer may be reused once this settles. */
  put(part: Uint8Array): Promise<void>;
  complete(): Promise<void>;
  abort(): Promise<void>;
}

/**
 * A blob store in an S3-compatible bucket, signed with SigV4 by aws4fetch.
 * Path-style URLs (`endpoint/bucket/key`) so MinIO and s3rver work too; a PUT replaces an object atomically.
 */
export function createS3BlobStore(opts: S3BlobStoreOptions): BlobStore {
  const prefix = checkS3Options(opts);
  const endpoint = opts.endpoint.replace(/\/+$/, "");
  const doFetch = opts.fetch ?? fetch;
  const clock = opts.clock ?? { now: () => new Date() };
  const client = new AwsClient({
    accessKeyId: opts.accessKeyId,
    secretAccessKey: opts.secretAccessKey,
    region: opts.region,
    service: "s3",
  });

  function urlOf(key: string): URL {
    assertBlobKey(key);
    const path = `${prefix}${key}`.split("/").map(encodeURIComponent).join(
      "/",
    );
    return new URL(`${endpoint}/${encodeURIComponent(opts.bucket)}/${path}`);
  }

  async function send(
    what: string,
    key: string,
    init: RequestInit & { url: URL },
  ): Promise<Response> {
    const { url, body, ...rest } = init;
    // For S3 the signature covers the X-Amz-Content-Sha256 header, not the body, so the
    // body goes to fetch as is: a Request built around it would be one more copy of a 5 MiB part.
    const signed = await client.sign(url, rest);
    let res: Response;
    try {
      res = await doFetch(signed.url, {
        method: signed.method,
        headers: signed.headers,
        body,
      });
    } catch (err) {
      throw new AppError(
        "SERVICE_UNAVAILABLE",
        `Cannot ${what} blob "${key}": storage is unreachable`,
        { cause: err, retryable: true },
      );
    }
    if (res.ok || res.status === 404) return res;
    const detail = await res.text().catch(() => "");
    const retryable = res.status >= 500 || res.status === 429;
    throw new AppError(
      retryable ? "SERVICE_UNAVAILABLE" : "INTERNAL_ERROR",
      `Cannot ${what} blob "${key}": storage answered ${res.status}`,
      { cause: new Error(detail.slice(0, 2000)), retryable },
    );
  }

  async function putObject(
    key: string,
    bytes: Uint8Array,
    contentType: string,
  ): Promise<void> {
    const res = await send("store", key, {
      url: urlOf(key),
      method: "PUT",
      // A real payload hash (not UNSIGNED-PAYLOAD) lets S3 refuse bytes corrupted on the way.
      headers: {
        "Content-Type": contentType,
        "X-Amz-Content-Sha256": payloadHash(bytes),
      },
      body: bytes as BodyInit,
    });
    await stored(key, res);
  }

  /** A multipart upload: the object appears only when `complete` succeeds. */
  async function startMultipart(
    key: string,
    contentType: string,
  ): Promise<Multipart> {
    const url = urlOf(key);
    const started = await send("store", key, {
      url: withQuery(url, { uploads: "" }),
      method: "POST",
      headers: { "Content-Type": contentType },
    });
    const uploadId = xmlText(await stored(key, started), "UploadId");
    const at = (query: Record<string, string>) =>
      withQuery(url, { ...query, uploadId });
    const etags: string[] = [];
    return {
      async put(part) {
        const res = await send("store", key, {
          url: at({ partNumber: String(etags.length + 1) }),
          method: "PUT",
          headers: { "X-Amz-Content-Sha256": payloadHash(part) },
          body: part as BodyInit,
        });
        await stored(key, res);
        etags.push(res.headers.get("ETag") ?? "");
      },
      async complete() {
        const res = await send("store", key, {
          url: at({}),
          method: "POST",
          headers: { "Content-Type": "application/xml" },
          body: `<CompleteMultipartUpload>${
            etags.map((etag, i) =>
              `<Part><PartNumber>${
                i + 1
              }</PartNumber><ETag>${etag}</ETag></Part>`
            ).join("")
          }</CompleteMultipartUpload>`,
        });
        // S3 can answer 200 and still fail the completion in the body.
        const answer = await stored(key, res);
        if (answer.includes("<Error>")) {
          throw new AppError(
            "SERVICE_UNAVAILABLE",
            `Cannot store blob "${key}": storage did not complete the upload`,
            { cause: new Error(answer.slice(0, 2000)), retryable: true },
          );
        }
      },
      async abort() {
        // Best effort: a bucket lifecycle rule cleans up what this cannot.
        await send("abort", key, { url: at({}), method: "DELETE" })
          .then((res) => res.body?.cancel(), () => {});
      },
    };
  }

  /** The response text of a store call; a 404 means the bucket is missing. */
  async function stored(key: string, res: Response): Promise<string> {
    const text = await res.text();
    if (res.status === 404) {
      throw new AppError(
        "INTERNAL_ERROR",
        `Cannot store blob "${key}": bucket "${opts.bucket}" does not exist`,
      );
    }
    return text;
  }

  return {
    kind: "s3",

    async put(key, body, { contentType }) {
      if (body instanceof Uint8Array) {
        return await putObject(key, body, contentType);
      }
      // One part in memory, reused; a body under one part is one plain PUT.
      const part = new Uint8Array(PART_BYTES);
      let length = 0;
      let upload: Multipart | undefined;
      try {
        await body(async (chunk) => {
          while (chunk.length > 0) {
            const n = Math.min(chunk.length, PART_BYTES - length);
            part.set(chunk.subarray(0, n), length);
            length += n;
            chunk = chunk.subarray(n);
            if (length === PART_BYTES) {
              upload ??= await startMultipart(key, contentType);
              await upload.put(part);
              length = 0;
            }
          }
        });
        if (!upload) {
          return await putObject(key, part.subarray(0, length), contentType);
        }
        if (length > 0) await upload.put(part.subarray(0, length));
        await upload.complete();
      } catch (err) {
        await upload?.abort();
        throw err;
      }
    },

    async get(key) {
      const res = await send("read", key, { url: urlOf(key), method: "GET" });
      if (res.status === 404) {
        await res.body?.cancel();
        return null;
      }
      return {
        bytes: new Uint8Array(await res.arrayBuffer()),
        contentType: res.headers.get("Content-Type"),
      };
    },

    async open(key) {
      const res = await send("read", key, { url: urlOf(key), method: "GET" });
      if (res.status === 404 || !res.body) {
        await res.body?.cancel();
        return null;
      }
      return {
        body: res.body,
        size: Number(res.headers.get("Content-Length") ?? 0),
        contentType: res.headers.get("Content-Type"),
      };
    },

    async stat(key) {
      const res = await send("stat", key, { url: urlOf(key), method: "HEAD" });
      await res.body?.cancel();
      if (res.status === 404) return null;
      return {
        key,
        size: Number(res.headers.get("Content-Length") ?? 0),
        contentType: res.headers.get("Content-Type"),
      };
    },

    async delete(key) {
      const res = await send("delete", key, {
        url: urlOf(key),
        method: "DELETE",
      });
      await res.body?.cancel();
    },

    async presignGet(key, { expiresInSeconds, fileName, contentType }) {
      assertExpiresIn(expiresInSeconds);
      const url = urlOf(key);
      url.searchParams.set("X-Amz-Expires", String(expiresInSeconds));
      if (fileName) {
        url.searchParams.set(
          "response-content-disposition",
          contentDisposition(fileName),
        );
      }
      if (contentType) {
        url.searchParams.set("response-content-type", contentType);
      }
      const signed = await client.sign(url, {
        method: "GET",
        aws: { signQuery: true, datetime: amzDate(clock.now()) },
      });
      return signed.url;
    },
  };
}

/** S3's smallest part (but the last). */
const PART_BYTES = 5 * 1024 * 1024;

/** Hex SHA-256 of a payload, hashed in place (WebCrypto would copy it first). */
function payloadHash(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function withQuery(url: URL, query: Record<string, string>): URL {
  const out = new URL(url);
  for (const [k, v] of Object.entries(query)) out.searchParams.set(k, v);
  return out;
}

function xmlText(xml: string, tag: string): string {
  const match = new RegExp(`<${tag}>([^<]+)</${tag}>`).exec(xml);
  if (!match) {
    throw new AppError(
      "SERVICE_UNAVAILABLE",
      `Storage answered without <${tag}>`,
      { retryable: true },
    );
  }
  return match[1]!;
}

/** SigV4 timestamp: `YYYYMMDD'T'HHMMSS'Z'`. */
function amzDate(date: Date): string {
  return date.toISOString().replace(/[:-]|\.\d{3}/g, "");
}

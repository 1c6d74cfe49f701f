// deno-lint-ignore-file no-console
// A local S3 for tests and dev: npm:s3rver behind a SigV4 check.
//   deno run -A scripts/s3rver.ts --port 0 --dir /tmp/s3 --bucket media [--bucket more] [--address 127.0.0.1]
// Prints `listening <port>` once ready; stops on SIGTERM or SIGINT.
//
// Why the front door: s3rver 3.7 accepts any SigV4 signature ("calculation is unimplemented") and serves
// anonymous requests, so a broken signer or a tampered presigned URL would pass unnoticed. Here every
// request must carry a SigV4 signature (header or query) that aws4fetch recomputes to the same value
// with the account's secret; s3rver itself still checks X-Amz-Expires and the access key id.
// Request bodies are not hashed (s3rver skips payload verification too).
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { AwsV4Signer } from "aws4fetch";
import S3rver from "s3rver";

/** s3rver's one built-in account. */
const SECRETS: Record<string, string> = { S3RVER: "S3RVER" };

interface Args {
  port: number;
  dir: string;
  address: string;
  buckets: string[];
}

function parseArgs(argv: string[]): Args {
  const args: Args = { port: 0, dir: "", address: "127.0.0.1", buckets: [] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[++i];
    if (value === undefined) throw new Error(`Missing value for "${flag}"`);
    if (flag === "--port") args.port = Number(value);
    else if (flag === "--dir") args.dir = value;
    else if (flag === "--address") args.address = value;
    else if (flag === "--bucket") args.buckets.push(value);
    else throw new Error(`Unknown option "${flag}"`);
  }
  if (!args.dir) throw new Error('Missing "--dir <directory>"');
  if (!Number.isInteger(args.port) || args.port < 0 || args.port > 65535) {
    throw new Error(`Invalid port "${args.port}"`);
  }
  return args;
}

/** Returns null when the request is signed correctly, else [S3 error code, message]. */
async function checkSignature(
  method: string,
  url: URL,
  headers: Headers,
): Promise<[string, string] | null> {
  const query = url.searchParams;
  const signQuery = query.has("X-Amz-Algorithm");
  let credential: string, signedHeaders: string, provided: string;
  let datetime: string;
  if (signQuery) {
    credential = query.get("X-Amz-Credential") ?? "";
    signedHeaders = query.get("X-Amz-SignedHeaders") ?? "";
    provided = query.get("X-Amz-Signature") ?? "";
    datetime = query.get("X-Amz-Date") ?? "";
  } else {
    const auth = headers.get("authorization");
    if (!auth) return ["AccessDenied", "Anonymous requests are refused"];
    const match =
      /^AWS4-HMAC-SHA256 Credential=([^,\s]+),\s*SignedHeaders=([^,\s]+),\s*Signature=([0-9a-f]+)$/
        .exec(auth);
    if (!match) return ["AccessDenied", "Only SigV4 is accepted"];
    [, credential = "", signedHeaders = "", provided = ""] = match;
    datetime = headers.get("x-amz-date") ?? "";
  }
  const [accessKeyId = "", , region = "", service = ""] = credential.split("/");
  const secretAccessKey = SECRETS[accessKeyId];
  if (!secretAccessKey) {
    return ["InvalidAccessKeyId", "The access key id is unknown"];
  }
  const toSign = new Headers();
  for (const name of signedHeaders.split(";")) {
    if (name !== "host") toSign.set(name, headers.get(name) ?? "");
  }
  const unsigned = new URL(url);
  unsigned.searchParams.delete("X-Amz-Signature");
  try {
    const signer = new AwsV4Signer({
      method,
      url: unsigned.toString(),
      headers: toSign,
      accessKeyId,
      secretAccessKey,
      region,
      service,
      datetime,
      signQuery,
      allHeaders: true,
    });
    const same = credential === `${accessKeyId}/${signer.credentialString}` &&
      signedHeaders === signer.signedHeaders &&
      provided === await signer.signature();
    return same ? null : [
      "SignatureDoesNotMatch",
      "The request signature we calculated does not match the signature you provided",
    ];
  } catch {
    return ["AccessDenied", "The signature is malformed"];
  }
}

function headersOf(req: IncomingMessage): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) {
      out.set(name, Array.isArray(value) ? value.join(", ") : value);
    }
  }
  return out;
}

/** The part of s3rver's FilesystemStore that readOwnWrites wraps. */
interface FilesystemStore {
  getResourcePath(
    bucket: string,
    key: string | undefined,
    name: string,
  ): string;
  putObject(object: { bucket: string; key: string }): Promise<Written>;
  putPart(
    bucket: string,
    uploadId: string,
    partNumber: number,
    content: unknown,
  ): Promise<Written>;
}
interface Written {
  size: number;
  md5: string;
}

/**
 * s3rver 3.7 answers a PUT of an object or a part once the bytes have gone
 * through its hashing stream, not once the file holds them, so a GET right
 * after it could read a file still empty (seen once under load: a test's
 * "old" blob read back as ""). S3 reads its own writes; with this, so does
 * s3rver: a write is answered once the file on disk hashes to what it
 * reported (a size check alone would pass on an old file of the same size).
 */
function readOwnWrites(store: FilesystemStore): void {
  const written = async (file: string, { md5 }: Written) => {
    for (let i = 0; i < 1_000; i++) {
      const bytes = await Deno.readFile(file).catch(() => null);
      if (bytes && createHash("md5").update(bytes).digest("hex") === md5) {
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  };
  const putObject = store.putObject.bind(store);
  store.putObject = async (object) => {
    const result = await putObject(object);
    await written(
      store.getResourcePath(object.bucket, object.key, "object"),
      result,
    );
    return result;
  };
  const putPart = store.putPart.bind(store);
  store.putPart = async (bucket, uploadId, partNumber, content) => {
    const result = await putPart(bucket, uploadId, partNumber, content);
    const uploads = store.getResourcePath(bucket, undefined, "uploads");
    await written(join(uploads, uploadId, String(partNumber)), result);
    return result;
  };
}

const args = parseArgs(Deno.args);
await Deno.mkdir(args.dir, { recursive: true });
const s3rver = new S3rver({
  directory: args.dir,
  silent: true,
  configureBuckets: args.buckets.map((name) => ({ name })),
});
await s3rver.configureBuckets();
readOwnWrites((s3rver as unknown as { store: FilesystemStore }).store);
const handle = s3rver.callback();

const server = createServer((req, res) => {
  const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
  const method = req.method ?? "GET";
  if (method === "OPTIONS") return handle(req, res);
  checkSignature(method, url, headersOf(req)).then((problem) => {
    if (!problem) return handle(req, res);
    const [code, message] = problem;
    res.writeHead(403, { "Content-Type": "application/xml" });
    res.end(
      method === "HEAD"
        ? undefined
        : `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`,
    );
  }).catch((err) => {
    console.error(err);
    res.writeHead(500).end();
  });
});

await new Promise<void>((resolve, reject) => {
  server.once("error", reject);
  server.listen(args.port, args.address, () => resolve());
});
console.log(`listening ${(server.address() as AddressInfo).port}`);

function stop(): void {
  server.closeAllConnections();
  server.close(() => Deno.exit(0));
}
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  try {
    Deno.addSignalListener(signal, stop);
  } catch { /* not every platform has every signal */ }
}

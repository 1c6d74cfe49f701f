import { toHex } from "../crypto.ts";
import {
  assertBlobKey,
  assertExpiresIn,
  type BlobStore,
} from "./blob_store.ts";

// File layout: MAGIC, a uint32 (big-endian) header length, the JSON header, then the bytes.
// The content type lives in the same file as the bytes, so one rename publishes both at once:
// a sidecar file would need a second rename and a reader could pair old bytes with a new type.
const MAGIC = new TextEncoder().encode("BMB1");
const PREFIX_LENGTH = MAGIC.length + 4;
const MAX_HEADER_LENGTH = 64 * 1024;

interface Header {
  contentType: string | null;
}

type NodePath = typeof import("node:path");
let loadedPath: NodePath | undefined;

/**
 * node:path, loaded on first use (as crypto.ts loads node:crypto): importing
 * it at start cost 4-9 ms, and a server may never touch its media.
 */
function nodePath(): NodePath {
  return loadedPath ??= process.getBuiltinModule("node:path") as NodePath;
}

/** A blob store in a local directory; every put is a temp file, fsync, then an atomic rename. */
export function createDiskBlobStore(rootDir: string): BlobStore {
  let root: string | undefined;

  function pathOf(key: string): string {
    assertBlobKey(key);
    const { join, resolve, sep } = nodePath();
    root ??= resolve(rootDir);
    const path = join(root, ...key.split("/"));
    // Defence in depth: assertBlobKey already makes escaping impossible.
    if (!path.startsWith(root + sep)) {
      throw new Error(`Storage key "${key}" resolves outside the store`);
    }
    return path;
  }

  return {
    kind: "disk",

    async put(key, body, opts) {
      const path = pathOf(key);
      const { dirname, join } = nodePath();
      const dir = dirname(path);
      await Deno.mkdir(dir, { recursive: true });
      const header = encodeHeader({ contentType: opts.contentType });
      // Leading dot: no valid key segment starts with one, so a temp file never collides with a blob.
      const tmp = join(dir, `.${randomSuffix()}.tmp`);
      try {
        const file = await Deno.open(tmp, { write: true, createNew: true });
        try {
          await writeAll(file, header);
          if (body instanceof Uint8Array) await writeAll(file, body);
          else await body((chunk) => writeAll(file, chunk));
          await file.sync();
        } finally {
          file.close();
        }
        await Deno.rename(tmp, path);
      } catch (err) {
        await Deno.remove(tmp).catch(() => {});
        throw err;
      }
      await syncDir(dir);
    },

    async get(key) {
      const data = await readOrNull(pathOf(key));
      if (!data) return null;
      const { header, bodyStart } = decodeHeader(key, data);
      return {
        bytes: data.subarray(bodyStart),
        contentType: header.contentType,
      };
    },

    async stat(key) {
      const blob = await openBlob(pathOf(key), key);
      blob?.file.close();
      return blob && { key, size: blob.size, contentType: blob.contentType };
    },

    async open(key) {
      const blob = await openBlob(pathOf(key), key);
      return blob && {
        body: blob.file.readable,
        size: blob.size,
        contentType: blob.contentType,
      };
    },

    async delete(key) {
      try {
        await Deno.remove(pathOf(key));
      } catch (err) {
        if (!isMissing(err)) throw err;
      }
    },

    presignGet(key, opts) {
      // The disk store cannot presign: the server signs its own download URL (signed_url.ts).
      try {
        assertBlobKey(key);
        assertExpiresIn(opts.expiresInSeconds);
      } catch (err) {
        return Promise.reject(err);
      }
      return Promise.resolve(null);
    },
  };
}

/** Opens a blob file positioned at its first body byte; null when there is none. */
async function openBlob(
  path: string,
  key: string,
): Promise<
  { file: Deno.FsFile; size: number; contentType: string | null } | null
> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { read: true });
  } catch (err) {
    if (isMissing(err)) return null;
    throw err;
  }
  try {
    const { size, isFile } = await file.stat();
    if (!isFile) {
      file.close();
      return null;
    }
    const prefix = await readExactly(file, PREFIX_LENGTH);
    const headerLength = checkPrefix(key, prefix);
    const { header } = decodeHeader(
      key,
      concat(prefix, await readExactly(file, headerLength)),
    );
    return {
      file,
      size: size - PREFIX_LENGTH - headerLength,
      contentType: header.contentType,
    };
  } catch (err) {
    file.close();
    throw err;
  }
}

function encodeHeader(header: Header): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(PREFIX_LENGTH + json.length);
  out.set(MAGIC, 0);
  new DataView(out.buffer).setUint32(MAGIC.length, json.length);
  out.set(json, PREFIX_LENGTH);
  return out;
}

function checkPrefix(key: string, prefix: Uint8Array): number {
  const ok = prefix.length >= PREFIX_LENGTH &&
    MAGIC.every((b, i) => prefix[i] === b);
  const length = ok
    ? new DataView(prefix.buffer, prefix.byteOffset).getUint32(MAGIC.length)
    : -1;
  if (length < 0 || length > MAX_HEADER_LENGTH) {
    throw new Error(`Cannot read blob "${key}": the file has no valid header`);
  }
  return length;
}

function decodeHeader(
  key: string,
  data: Uint8Array,
): { header: Header; bodyStart: number } {
  const length = checkPrefix(key, data);
  const bodyStart = PREFIX_LENGTH + length;
  if (data.length < bodyStart) {
    throw new Error(`Cannot read blob "${key}": the header is truncated`);
  }
  const parsed = JSON.parse(
    new TextDecoder().decode(data.subarray(PREFIX_LENGTH, bodyStart)),
  ) as Partial<Header>;
  return {
    header: {
      contentType: typeof parsed.contentType === "string"
        ? parsed.contentType
        : null,
    },
    bodyStart,
  };
}

async function readOrNull(path: string): Promise<Uint8Array | null> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    // A directory where a blob would be (key "a/b" when "a/b/c" exists) is no blob either.
    if (isMissing(err) || err instanceof Deno.errors.IsADirectory) return null;
    throw err;
  }
}

async function readExactly(file: Deno.FsFile, n: number): Promise<Uint8Array> {
  const out = new Uint8Array(n);
  let offset = 0;
  while (offset < n) {
    const read = await file.read(out.subarray(offset));
    if (read === null) break;
    offset += read;
  }
  return out.subarray(0, offset);
}

async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let offset = 0;
  while (offset < bytes.length) {
    offset += await file.write(bytes.subarray(offset));
  }
}

/** Makes the rename itself durable; not every platform can open a directory, so failures are ignored. */
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await Deno.open(dir, { read: true });
    try {
      await handle.sync();
    } finally {
      handle.close();
    }
  } catch { /* best effort */ }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function isMissing(err: unknown): boolean {
  return err instanceof Deno.errors.NotFound ||
    err instanceof Deno.errors.NotADirectory;
}

function randomSuffix(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(12)));
}

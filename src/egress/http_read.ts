// Reads one HTTP/1.1 response from a Connection: interim responses, the
// head, then the body up to a byte limit (RFC 9112 sections 6 and 7).
import { closedEarly, type Connection } from "./connection.ts";
import { EgressError } from "./errors.ts";
import { findHeadEnd, parseHead, type ResponseHead } from "./http_parse.ts";

/** Cap on the status line plus header section of one response. */
export const MAX_HEAD_BYTES = 32 * 1024;
const MAX_CHUNK_LINE_BYTES = 4096;

export interface ResponseRead {
  head: ResponseHead;
  excerpt: Uint8Array;
  bodyBytes: number;
  /** Reading stopped at maxBodyBytes before the end of the body was seen. */
  truncated: boolean;
  /** The body ended exactly and nothing else was received: the socket may be reused. */
  reusable: boolean;
}

/** Receives body bytes as they arrive; the chunk is only valid until the promise settles. */
export type BodyWriter = (chunk: Uint8Array) => Promise<void>;

const NO_BYTES = new Uint8Array(0);

/** Keeps the first bytes of the body and counts the rest, up to a limit; a writer also gets every byte. */
class BodySink {
  /**
   * Made on the first body bytes, no larger than the body's first chunk
   * needs: a 1 KB buffer per response (most bodies are "ok" or empty) was a
   * twentieth of a webhook POST's CPU.
   */
  excerpt = NO_BYTES;
  length = 0;
  bytes = 0;
  readonly max: number;
  readonly #excerptBytes: number;
  readonly #write: BodyWriter | undefined;

  constructor(max: number, excerptBytes: number, write?: BodyWriter) {
    this.max = max;
    this.#excerptBytes = Math.min(excerptBytes, max);
    this.#write = write;
  }

  get room(): number {
    return this.max - this.bytes;
  }

  /** Takes up to `count` bytes from the connection buffer. */
  async take(conn: Connection, count: number): Promise<void> {
    const keep = Math.min(count, this.#excerptBytes - this.length);
    if (keep > 0) {
      if (this.length + keep > this.excerpt.byteLength) this.#grow(count);
      this.excerpt.set(
        conn.buf.subarray(conn.start, conn.start + keep),
        this.length,
      );
      this.length += keep;
    }
    if (this.#write) {
      await this.#write(conn.buf.subarray(conn.start, conn.start + count));
    }
    this.bytes += count;
    conn.consume(count);
  }

  /** Room for `count` more bytes (all of the excerpt once it is cut to size). */
  #grow(count: number): void {
    const size = this.length + count >= this.#excerptBytes
      ? this.#excerptBytes
      : Math.max(
        this.length + count,
        Math.min(2 * this.excerpt.byteLength, this.#excerptBytes),
      );
    const next = new Uint8Array(size);
    next.set(this.excerpt.subarray(0, this.length));
    this.excerpt = next;
  }
}

/** Reads the final response (skipping 1xx) and its body; throws EgressError (or what the body writer throws). */
export async function readResponse(
  conn: Connection,
  options: {
    maxBodyBytes: number;
    excerptBytes: number;
    onBody?: (head: ResponseHead) => BodyWriter | undefined;
  },
): Promise<ResponseRead> {
  let head: ResponseHead;
  while (true) {
    head = await readHead(conn);
    if (head.status === 101) {
      throw new EgressError(
        "protocol",
        "Server switched protocols (101) without being asked",
      );
    }
    if (head.status >= 200) break;
  }
  const sink = new BodySink(
    options.maxBodyBytes,
    options.excerptBytes,
    options.onBody?.(head),
  );
  let complete: boolean;
  switch (head.framing.kind) {
    case "none":
      complete = true;
      break;
    case "length":
      complete = await readLength(conn, { sink, length: head.framing.length });
      break;
    case "chunked":
      complete = await readChunked(conn, sink);
      break;
    case "eof":
      complete = await readToEof(conn, sink);
      break;
  }
  return {
    head,
    excerpt: sink.excerpt.subarray(0, sink.length),
    bodyBytes: sink.bytes,
    truncated: !complete,
    reusable: complete && head.keepAlive && conn.buffered === 0,
  };
}

async function readHead(conn: Connection): Promise<ResponseHead> {
  let scanned = 0;
  while (true) {
    const at = findHeadEnd(
      conn.buf.subarray(0, conn.end),
      conn.start + scanned,
    );
    if (at !== -1) {
      const length = at - conn.start;
      if (length + 4 > MAX_HEAD_BYTES) break;
      const head = parseHead(conn.buf.subarray(conn.start, at));
      conn.consume(length + 4);
      return head;
    }
    if (conn.buffered >= MAX_HEAD_BYTES) break;
    scanned = Math.max(0, conn.buffered - 3);
    if (!(await conn.fill())) throw closedEarly();
  }
  throw new EgressError(
    "protocol",
    `Response headers exceed ${MAX_HEAD_BYTES} bytes`,
  );
}

async function readLength(
  conn: Connection,
  options: { sink: BodySink; length: number },
): Promise<boolean> {
  const sink = options.sink;
  let remaining = options.length;
  while (remaining > 0) {
    if (sink.room === 0) return false;
    if (conn.buffered === 0 && !(await conn.fill())) throw closedEarly();
    const count = Math.min(conn.buffered, remaining, sink.room);
    await sink.take(conn, count);
    remaining -= count;
  }
  return true;
}

async function readToEof(conn: Connection, sink: BodySink): Promise<boolean> {
  while (true) {
    if (conn.buffered > 0) {
      if (sink.room === 0) return false;
      await sink.take(conn, Math.min(conn.buffered, sink.room));
    } else if (sink.room === 0) {
      return false;
    } else if (!(await conn.fill())) {
      return true;
    }
  }
}

async function readChunked(conn: Connection, sink: BodySink): Promise<boolean> {
  while (true) {
    const size = chunkSize(conn, await readLine(conn));
    if (size === 0) break;
    let remaining = size;
    while (remaining > 0) {
      if (sink.room === 0) return false;
      if (conn.buffered === 0 && !(await conn.fill())) throw closedEarly();
      const count = Math.min(conn.buffered, remaining, sink.room);
      await sink.take(conn, count);
      remaining -= count;
    }
    // Once the limit is hit, use only what is already buffered: never wait.
    if (sink.room === 0 && conn.buffered < 2) return false;
    await conn.need(2);
    if (conn.buf[conn.start] !== 13 || conn.buf[conn.start + 1] !== 10) {
      throw new EgressError("protocol", "Chunk data is not followed by CRLF");
    }
    conn.consume(2);
    if (sink.room === 0) return endsHere(conn);
  }
  // Trailer section: skipped, but bounded like a header section.
  let trailers = 0;
  while (true) {
    const length = await readLine(conn);
    conn.consume(length + 2);
    if (length === 0) return true;
    trailers += length + 2;
    if (trailers > MAX_HEAD_BYTES) {
      throw new EgressError(
        "protocol",
        `Response trailers exceed ${MAX_HEAD_BYTES} bytes`,
      );
    }
  }
}

/** True (and consumed) when the buffer holds exactly the last chunk without trailers. */
function endsHere(conn: Connection): boolean {
  const b = conn.buf;
  const s = conn.start;
  if (
    conn.buffered !== 5 || b[s] !== 48 || b[s + 1] !== 13 ||
    b[s + 2] !== 10 || b[s + 3] !== 13 || b[s + 4] !== 10
  ) {
    return false;
  }
  conn.consume(5);
  return true;
}

/** Length of the next CRLF-terminated line at conn.start (the line stays buffered). */
async function readLine(conn: Connection): Promise<number> {
  let scanned = 0;
  while (true) {
    const cr = conn.buf.subarray(0, conn.end).indexOf(13, conn.start + scanned);
    if (cr !== -1 && cr + 1 < conn.end) {
      if (conn.buf[cr + 1] !== 10) {
        throw new EgressError("protocol", "Bare CR in chunked framing");
      }
      if (cr - conn.start > MAX_CHUNK_LINE_BYTES) break;
      return cr - conn.start;
    }
    if (conn.buffered > MAX_CHUNK_LINE_BYTES) break;
    scanned = Math.max(0, conn.buffered - 1);
    if (!(await conn.fill())) throw closedEarly();
  }
  throw new EgressError(
    "protocol",
    `Chunk line exceeds ${MAX_CHUNK_LINE_BYTES} bytes`,
  );
}

/** Parses `hex [BWS ; ext]` and consumes the size line with its CRLF. */
function chunkSize(conn: Connection, length: number): number {
  const buf = conn.buf;
  const start = conn.start;
  let size = 0;
  let i = 0;
  for (; i < length; i++) {
    const c = buf[start + i]!;
    const digit = c >= 48 && c <= 57
      ? c - 48
      : c >= 97 && c <= 102
      ? c - 87
      : c >= 65 && c <= 70
      ? c - 55
      : -1;
    if (digit < 0) break;
    size = size * 16 + digit;
  }
  let j = i;
  while (j < length && (buf[start + j] === 32 || buf[start + j] === 9)) j++;
  if (i === 0 || i > 12 || (j < length && buf[start + j] !== 59)) {
    throw new EgressError("protocol", "Malformed chunk size line");
  }
  conn.consume(length + 2);
  return size;
}

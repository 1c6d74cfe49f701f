import { EgressError, reasonOf } from "./errors.ts";

const INITIAL_BUFFER_BYTES = 16 * 1024;
const MAX_BUFFER_BYTES = 64 * 1024;

/**
 * One socket with its own read buffer; bytes in buf[start, end) are received
 * and not yet consumed. Read and write failures become EgressError("network").
 * The buffer fields are public on purpose: http_read.ts parses in place.
 */
export class Connection {
  readonly key: string;
  /** The IP actually dialled. */
  readonly address: string;
  buf: Uint8Array = new Uint8Array(INITIAL_BUFFER_BYTES);
  start = 0;
  end = 0;
  /** Bytes received since the last write; 0 means the peer has not answered yet. */
  received = 0;
  /** The idle timer while the connection sits in the pool. */
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** True while the connection sits in the pool. */
  idle = false;
  #conn: Deno.Conn;
  #closed = false;
  /** A read started while idle; the next fill() takes its result. */
  #pending: Promise<number | null> | null = null;

  constructor(conn: Deno.Conn, options: { key: string; address: string }) {
    this.#conn = conn;
    this.key = options.key;
    this.address = options.address;
  }

  get buffered(): number {
    return this.end - this.start;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Writes every byte; resets `received`. */
  async write(bytes: Uint8Array): Promise<void> {
    this.received = 0;
    let offset = 0;
    try {
      while (offset < bytes.byteLength) {
        offset += await this.#conn.write(bytes.subarray(offset));
      }
    } catch (err) {
      throw ioError(err, "writing the request");
    }
  }

  /** Reads more bytes into the buffer; false at EOF. Compacts or grows the buffer when it is full. */
  async fill(): Promise<boolean> {
    if (this.end === this.buf.byteLength) {
      if (this.start > 0) {
        this.buf.copyWithin(0, this.start, this.end);
      } else {
        const size = Math.min(this.buf.byteLength * 2, MAX_BUFFER_BYTES);
        if (size === this.buf.byteLength) {
          throw new EgressError("protocol", "Response line is too long");
        }
        const grown = new Uint8Array(size);
        grown.set(this.buf.subarray(0, this.end));
        this.buf = grown;
      }
      this.end -= this.start;
      this.start = 0;
    }
    const read = this.#pending ?? this.#conn.read(this.buf.subarray(this.end));
    this.#pending = null;
    let n: number | null;
    try {
      n = await read;
    } catch (err) {
      throw ioError(err, "reading the response");
    }
    if (n === null) return false;
    this.end += n;
    this.received += n;
    return true;
  }

  /** Reads until at least `count` bytes are buffered; EOF first is a network error. */
  async need(count: number): Promise<void> {
    while (this.buffered < count) {
      if (!(await this.fill())) throw closedEarly();
    }
  }

  /**
   * Keeps a read pending while idle (the buffer is empty), so a server that
   * closes an idle socket, or sends anything unasked, is noticed at once:
   * `onIdleEvent` runs if that read ends while still idle. Once the
   * connection is taken, the next fill() receives the read's result.
   */
  watch(onIdleEvent: () => void): void {
    const read = this.#conn.read(this.buf.subarray(this.end));
    this.#pending = read;
    const settled = () => {
      if (this.idle && this.#pending === read) onIdleEvent();
    };
    read.then(settled, settled);
  }

  consume(count: number): void {
    this.start += count;
    if (this.start === this.end) this.start = this.end = 0;
  }

  /** Closes the socket; safe to call more than once. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed by the runtime.
    }
  }
}

/** The error for a peer that closed the connection before the response ended. */
export function closedEarly(): EgressError {
  return new EgressError(
    "network",
    "Connection closed before a complete response",
  );
}

function ioError(err: unknown, doing: string): EgressError {
  if (err instanceof EgressError) return err;
  if (
    err instanceof Deno.errors.ConnectionReset ||
    err instanceof Deno.errors.BrokenPipe
  ) {
    return new EgressError("network", "Connection reset by peer", {
      cause: err,
    });
  }
  if (
    err instanceof Deno.errors.UnexpectedEof ||
    err instanceof Deno.errors.NotConnected
  ) {
    return closedEarly();
  }
  return new EgressError(
    "network",
    `Connection failed while ${doing}: ${reasonOf(err)}`,
    { cause: err },
  );
}

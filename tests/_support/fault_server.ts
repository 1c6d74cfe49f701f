// A scripted raw-TCP (optionally TLS) HTTP/1.1 server on 127.0.0.1 for fault
// injection. It is built on node:net because only node's resetAndDestroy()
// sends a real TCP RST; Deno's close() always sends FIN first.
//
//   const server = await startFaultServer();
//   server.script(interim(100), respond(200, { body: "ok" }), blackhole());
//   ... server.requests[0].headers, server.connections ...
//   await server.close();
//
// Each request takes the next scripted behaviour when its first byte arrives
// (so `reset()` and `stall()` act before the request is read); with an empty
// script the answer is `respond(200)`. `interim()` does not end a request: the
// same request then takes the next behaviour too. With `tls`, the handshake
// happens before any behaviour runs; to stall a handshake, point an https URL
// at a plain server scripted with `stall()`.
import { Buffer } from "node:buffer";
import net from "node:net";
import tls from "node:tls";

/** One request as the server read it. */
export interface RawRequest {
  method: string;
  /** The request-target exactly as sent, e.g. `/hook?x=1`. */
  target: string;
  /** e.g. `HTTP/1.1` */
  version: string;
  /** In order, names as sent, values trimmed. */
  headers: Array<[string, string]>;
  /** The Content-Length body (chunked request bodies are not supported). */
  body: Uint8Array;
  /** Every byte of the request: head and body. */
  raw: Uint8Array;
}

export interface RespondOptions {
  /** Sent in order. A Content-Length or Transfer-Encoding here replaces the server's own framing. */
  headers?: Array<[string, string]> | Record<string, string>;
  body?: string | Uint8Array;
  /** Send the body as two chunks plus the last chunk, with Transfer-Encoding: chunked. */
  chunked?: boolean;
  /** Close the connection after the response (FIN), without announcing it in a header. */
  close?: boolean;
}

/** What the server does with one request; build them with the functions below. */
export type Behaviour =
  | { kind: "respond"; status: number; options: RespondOptions }
  | { kind: "raw"; bytes: Uint8Array; close: boolean }
  | { kind: "interim"; status: number; headers: Array<[string, string]> }
  | { kind: "drip"; bytesPerSecond: number; totalBytes: number }
  | { kind: "blackhole" | "reset" | "hangup" | "stall" };

export interface FaultServer {
  readonly port: number;
  /** `http(s)://127.0.0.1:<port><path>`; path defaults to `/`. */
  url(path?: string): string;
  /** TCP connections accepted so far (counted before any TLS handshake). */
  readonly connections: number;
  /** TCP connections open right now. */
  readonly open: number;
  /** Every request read so far, in arrival order. */
  readonly requests: RawRequest[];
  /** Appends behaviours to the queue that requests consume in order. */
  script(...behaviours: Behaviour[]): void;
  /** Writes bytes to every open connection now, out of turn (e.g. a 408 on idle keep-alive sockets). */
  broadcast(bytes: string | Uint8Array): void;
  /** Destroys every connection, stops timers and closes the listener. */
  close(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

/** Answers with a complete response; Content-Length framing unless `chunked`. */
export function respond(
  status: number,
  options: RespondOptions = {},
): Behaviour {
  return { kind: "respond", status, options };
}

/** Writes arbitrary bytes as the answer, then keeps the connection (or closes it with `close`). */
export function raw(
  bytes: string | Uint8Array,
  options: { close?: boolean } = {},
): Behaviour {
  return { kind: "raw", bytes: toBytes(bytes), close: options.close ?? false };
}

/** Sends a 1xx interim response; the same request then takes the next behaviour. */
export function interim(
  status = 100,
  headers: Array<[string, string]> = [],
): Behaviour {
  return { kind: "interim", status, headers };
}

/** Sends a 200 head with Content-Length totalBytes, then the body at bytesPerSecond. */
export function drip(bytesPerSecond: number, totalBytes: number): Behaviour {
  return { kind: "drip", bytesPerSecond, totalBytes };
}

/** Reads the request (and anything after it) and never answers. */
export function blackhole(): Behaviour {
  return { kind: "blackhole" };
}

/** Aborts the connection with a TCP RST as soon as the request starts arriving (plain destroy under TLS). */
export function reset(): Behaviour {
  return { kind: "reset" };
}

/** Reads the request, then closes the connection (FIN) without answering. */
export function hangup(): Behaviour {
  return { kind: "hangup" };
}

/** Stops reading as soon as bytes arrive and never sends anything (not even a TLS handshake reply). */
export function stall(): Behaviour {
  return { kind: "stall" };
}

/** The test CA and leaf certificate of tests/_support/tls (read when called). */
export function testTls(): { ca: string; cert: string; key: string } {
  const read = (name: string) =>
    Deno.readTextFileSync(new URL(`./tls/${name}`, import.meta.url));
  return { ca: read("ca.pem"), cert: read("leaf.pem"), key: read("leaf.key") };
}

/** Starts a fault server on 127.0.0.1 with an ephemeral port. */
export async function startFaultServer(
  options: { tls?: { cert: string; key: string } } = {},
): Promise<FaultServer> {
  const server = new Server(options.tls);
  await server.listen();
  return server;
}

class Server implements FaultServer {
  readonly requests: RawRequest[] = [];
  connections = 0;
  #listener: net.Server;
  #scheme: string;
  #queue: Behaviour[] = [];
  #sockets = new Set<net.Socket>();
  #peers = new Set<Peer>();
  #stop = new AbortController();

  constructor(tlsOptions?: { cert: string; key: string }) {
    this.#scheme = tlsOptions ? "https" : "http";
    const serve = (socket: net.Socket) => {
      const peer = new Peer(socket);
      this.#peers.add(peer);
      this.#serve(peer).finally(() => this.#peers.delete(peer));
    };
    if (tlsOptions) {
      const secure = tls.createServer(tlsOptions, serve);
      secure.on("tlsClientError", () => {});
      this.#listener = secure;
    } else {
      this.#listener = net.createServer(serve);
    }
    this.#listener.on("connection", (socket: net.Socket) => {
      this.connections++;
      this.#sockets.add(socket);
      socket.on("error", () => {});
      socket.on("close", () => this.#sockets.delete(socket));
    });
  }

  listen(): Promise<void> {
    return new Promise((resolve) =>
      this.#listener.listen(0, "127.0.0.1", () => resolve())
    );
  }

  get port(): number {
    return (this.#listener.address() as net.AddressInfo).port;
  }

  get open(): number {
    return this.#sockets.size;
  }

  url(path = "/"): string {
    return `${this.#scheme}://127.0.0.1:${this.port}${path}`;
  }

  script(...behaviours: Behaviour[]): void {
    this.#queue.push(...behaviours);
  }

  broadcast(bytes: string | Uint8Array): void {
    for (const peer of this.#peers) peer.write(toBytes(bytes));
  }

  async close(): Promise<void> {
    this.#stop.abort();
    for (const peer of this.#peers) peer.destroy(true);
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#listener.close(() => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #next(): Behaviour {
    return this.#queue.shift() ?? respond(200);
  }

  async #serve(peer: Peer): Promise<void> {
    try {
      while (await peer.waitData()) {
        let behaviour = this.#next();
        if (behaviour.kind === "reset") return peer.reset();
        if (behaviour.kind === "stall") return await this.#stall(peer);
        const request = await peer.readRequest();
        if (request === null) return;
        this.requests.push(request);
        while (behaviour.kind === "interim") {
          peer.write(head(behaviour.status, behaviour.headers));
          behaviour = this.#next();
        }
        if (!(await this.#answer(peer, behaviour))) return;
      }
    } finally {
      peer.destroy();
    }
  }

  /** Runs one final behaviour; false when the connection is finished. */
  async #answer(peer: Peer, behaviour: Behaviour): Promise<boolean> {
    switch (behaviour.kind) {
      case "respond": {
        peer.write(response(behaviour.status, behaviour.options));
        if (behaviour.options.close) return peer.end();
        return true;
      }
      case "raw":
        peer.write(behaviour.bytes);
        return behaviour.close ? peer.end() : true;
      case "drip":
        return await this.#drip(peer, behaviour);
      case "blackhole":
        while (await peer.waitData()) peer.discard();
        return false;
      case "hangup":
        return peer.end();
      case "reset":
        peer.reset();
        return false;
      case "stall":
        await this.#stall(peer);
        return false;
      case "interim":
        throw new Error("Interim behaviours are handled before the answer");
    }
  }

  async #drip(
    peer: Peer,
    behaviour: { bytesPerSecond: number; totalBytes: number },
  ): Promise<boolean> {
    peer.write(head(200, [["Content-Length", String(behaviour.totalBytes)]]));
    const tickMs = Math.max(10, 1000 / behaviour.bytesPerSecond);
    const perTick = Math.max(
      1,
      Math.round(behaviour.bytesPerSecond * tickMs / 1000),
    );
    let sent = 0;
    while (sent < behaviour.totalBytes) {
      if (!(await this.#sleep(tickMs)) || peer.ended) return false;
      const count = Math.min(perTick, behaviour.totalBytes - sent);
      peer.write(new Uint8Array(count).fill(120));
      sent += count;
    }
    return true;
  }

  async #stall(peer: Peer): Promise<void> {
    peer.pause();
    if (this.#stop.signal.aborted) return;
    await new Promise((resolve) =>
      this.#stop.signal.addEventListener("abort", resolve, { once: true })
    );
  }

  /** Waits ms; false when the server closed first. */
  #sleep(ms: number): Promise<boolean> {
    const signal = this.#stop.signal;
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        signal.removeEventListener("abort", onAbort);
        resolve(true);
      }, ms);
      const onAbort = () => {
        clearTimeout(timer);
        resolve(false);
      };
      signal.addEventListener("abort", onAbort, { once: true });
    });
  }
}

/** One accepted socket with a byte buffer fed by 'data' events. */
class Peer {
  ended = false;
  #socket: net.Socket;
  #buffer: Uint8Array = new Uint8Array(0);
  #wake: (() => void) | null = null;

  constructor(socket: net.Socket) {
    this.#socket = socket;
    socket.on("data", (chunk: Buffer) => {
      this.#buffer = concat(this.#buffer, new Uint8Array(chunk));
      this.#notify();
    });
    const finish = () => {
      this.ended = true;
      this.#notify();
    };
    socket.on("end", finish);
    socket.on("close", finish);
    socket.on("error", finish);
  }

  /** Resolves true once bytes are buffered, false at EOF or close. */
  async waitData(): Promise<boolean> {
    while (this.#buffer.byteLength === 0) {
      if (this.ended) return false;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    return true;
  }

  /** Reads one request with a Content-Length body; null if the peer left first. */
  async readRequest(): Promise<RawRequest | null> {
    let end: number;
    while ((end = headEnd(this.#buffer)) === -1) {
      if (!(await this.#more())) return null;
    }
    const lines = new TextDecoder("latin1").decode(
      this.#buffer.subarray(0, end),
    )
      .split("\r\n");
    const [method = "", target = "", version = ""] = lines[0]!.split(" ");
    const headers: Array<[string, string]> = lines.slice(1).map((line) => {
      const colon = line.indexOf(":");
      return [line.slice(0, colon), line.slice(colon + 1).trim()];
    });
    const length = Number(
      headers.find(([name]) => name.toLowerCase() === "content-length")?.[1] ??
        0,
    );
    const total = end + 4 + length;
    while (this.#buffer.byteLength < total) {
      if (!(await this.#more())) return null;
    }
    const raw = this.#buffer.slice(0, total);
    this.#buffer = this.#buffer.slice(total);
    return { method, target, version, headers, body: raw.slice(end + 4), raw };
  }

  discard(): void {
    this.#buffer = new Uint8Array(0);
  }

  write(bytes: Uint8Array): void {
    if (!this.ended) this.#socket.write(bytes);
  }

  /** Closes after pending writes (FIN, then fully closed); false for the caller's loop. */
  end(): false {
    this.#socket.end(() => this.#socket.destroy());
    return false;
  }

  pause(): void {
    this.#socket.pause();
  }

  reset(): void {
    if (
      typeof this.#socket.resetAndDestroy === "function" &&
      !("encrypted" in this.#socket)
    ) {
      this.#socket.resetAndDestroy();
    } else {
      this.#socket.destroy();
    }
  }

  /** Destroys the socket; unless forced, one already ending is left to flush. */
  destroy(force = false): void {
    if (!force && this.#socket.writableEnded) return;
    this.#socket.destroy();
  }

  async #more(): Promise<boolean> {
    const before = this.#buffer.byteLength;
    while (this.#buffer.byteLength === before) {
      if (this.ended) return false;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    return true;
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = null;
    wake?.();
  }
}

function response(status: number, options: RespondOptions): Uint8Array {
  const headers = Array.isArray(options.headers)
    ? [...options.headers]
    : Object.entries(options.headers ?? {});
  const body = toBytes(options.body ?? "");
  const framed = headers.some(([name]) =>
    ["content-length", "transfer-encoding"].includes(name.toLowerCase())
  );
  if (options.chunked) {
    if (!framed) headers.push(["Transfer-Encoding", "chunked"]);
    const half = Math.ceil(body.byteLength / 2);
    const parts = [body.subarray(0, half), body.subarray(half)]
      .filter((part) => part.byteLength > 0)
      .flatMap((
        part,
      ) => [
        toBytes(`${part.byteLength.toString(16)}\r\n`),
        part,
        toBytes("\r\n"),
      ]);
    return concat(head(status, headers), ...parts, toBytes("0\r\n\r\n"));
  }
  const bodiless = status === 204 || status === 304 || status < 200;
  if (!framed && !bodiless) {
    headers.push(["Content-Length", String(body.byteLength)]);
  }
  return concat(head(status, headers), body);
}

function head(status: number, headers: Array<[string, string]>): Uint8Array {
  const lines = headers.map(([name, value]) => `${name}: ${value}\r\n`).join(
    "",
  );
  return toBytes(
    `HTTP/1.1 ${status} ${REASONS[status] ?? "Status"}\r\n${lines}\r\n`,
  );
}

const REASONS: Record<number, string> = {
  100: "Continue",
  102: "Processing",
  103: "Early Hints",
  200: "OK",
  201: "Created",
  202: "Accepted",
  204: "No Content",
  301: "Moved Permanently",
  304: "Not Modified",
  400: "Bad Request",
  404: "Not Found",
  410: "Gone",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
};

function headEnd(bytes: Uint8Array): number {
  for (let i = 0; i + 3 < bytes.byteLength; i++) {
    if (
      bytes[i] === 13 && bytes[i + 1] === 10 && bytes[i + 2] === 13 &&
      bytes[i + 3] === 10
    ) return i;
  }
  return -1;
}

function toBytes(value: string | Uint8Array): Uint8Array {
  return typeof value === "string" ? new TextEncoder().encode(value) : value;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, part) => n + part.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.byteLength;
  }
  return out;
}

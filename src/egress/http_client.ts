// A small HTTP/1.1 client that dials only checked IPs. Deno's fetch has no
// dial hook, so "resolve, check, then fetch(name)" could be rebound between
// the check and the connect; here the socket goes to the address checked.
import type { Connection } from "./connection.ts";
import { ConnectionPool } from "./connection_pool.ts";
import { Deadline } from "./deadline.ts";
import { allowedAddresses, dial, poolKey } from "./dial.ts";
import { EgressError, reasonOf } from "./errors.ts";
import { encodeRequest } from "./http_parse.ts";
import {
  type BodyWriter,
  readResponse,
  type ResponseRead,
} from "./http_read.ts";
import { type Resolver, systemResolver } from "./resolver.ts";
import { parseTarget, type Target } from "./target.ts";

export { EgressError, type EgressErrorKind } from "./errors.ts";
export type { BodyWriter } from "./http_read.ts";

export interface EgressRequest {
  method: "POST" | "GET";
  url: string | URL;
  /** In order; names/values are re-checked (no CR, LF, NUL) and throw EgressError("protocol") if bad. Host, Content-Length and Transfer-Encoding are set by the client and rejected here. */
  headers: Array<[string, string]>;
  body?: Uint8Array;
  /** ONE deadline for the whole exchange: DNS, connect, TLS, writing, status/headers and body. */
  timeoutMs: number;
  /** Stop reading the body after this many bytes (the connection is then closed, not reused); still a normal response. @default 65536 */
  maxBodyBytes?: number;
  /** Bytes of body kept in `excerpt`. @default 1024 */
  excerptBytes?: number;
  /** Aborting rejects with EgressError("timeout", "Request was aborted before a complete response"). */
  signal?: AbortSignal;
  /**
   * Called once the final head is read: a writer returned here receives every body byte (up to maxBodyBytes)
   * as it arrives, awaited before more is read; a writer that throws ends the exchange (EgressError("network") with it as cause).
   */
  onBody?: (
    head: { status: number; headers: Headers },
  ) => BodyWriter | undefined;
}

export interface EgressResponse {
  status: number;
  /** Response headers (Headers object; repeated names combined as usual). */
  headers: Headers;
  /** First excerptBytes of the body, decoded as UTF-8 (lossy). */
  excerpt: string;
  /** Body bytes read (at most maxBodyBytes). */
  bodyBytes: number;
  /** Reading stopped at maxBodyBytes before the end of the body was seen. */
  truncated: boolean;
  durationMs: number;
  /** The IP actually dialled. */
  address: string;
  /** True when an idle keep-alive connection was reused. */
  reused: boolean;
}

export interface EgressClientOptions {
  /** WEBHOOK_ALLOW_PRIVATE_NETWORKS */
  allowPrivate: boolean;
  /** WEBHOOK_ALLOW_HTTP */
  allowHttp: boolean;
  /** @default systemResolver */
  resolver?: Resolver;
  /** Extra trust anchors (tests); otherwise Deno's defaults. */
  caCerts?: string[];
  /** Idle keep-alive sockets kept per origin. @default 32 */
  maxIdlePerOrigin?: number;
  /** Idle sockets are closed after this (Node servers default to a 5 s keep-alive). @default 4000 */
  idleTimeoutMs?: number;
}

interface Sent {
  read: ResponseRead;
  address: string;
  reused: boolean;
}

/** One request in flight: what to send, how much to read, and its deadline. */
interface Exchange {
  target: Target;
  bytes: Uint8Array;
  limits: {
    maxBodyBytes: number;
    excerptBytes: number;
    onBody: EgressRequest["onBody"];
  };
  deadline: Deadline;
}

const decoder = new TextDecoder();

/** Sends webhook deliveries (and media downloads) to outside URLs, dialling only addresses that pass checkAddress. */
export class EgressClient {
  #rules: { allowPrivate: boolean; allowHttp: boolean };
  #resolver: Resolver;
  #caCerts: string[] | undefined;
  #pool: ConnectionPool;

  constructor(options: EgressClientOptions) {
    this.#rules = {
      allowPrivate: options.allowPrivate,
      allowHttp: options.allowHttp,
    };
    this.#resolver = options.resolver ?? systemResolver;
    this.#caCerts = options.caCerts;
    this.#pool = new ConnectionPool({
      maxIdlePerOrigin: options.maxIdlePerOrigin ?? 32,
      idleTimeoutMs: options.idleTimeoutMs ?? 4000,
    });
  }

  /** Sends one request within req.timeoutMs; every failure is an EgressError (a non-positive timeoutMs is a RangeError). */
  async request(req: EgressRequest): Promise<EgressResponse> {
    const started = performance.now();
    const raw = typeof req.url === "string" ? req.url : req.url.href;
    const target = parseTarget(raw, this.#rules);
    const bytes = encodeRequest(req.method, target, req);
    if (req.signal?.aborted) {
      throw new EgressError(
        "timeout",
        "Request was aborted before a complete response",
      );
    }
    if (!(req.timeoutMs > 0)) {
      throw new RangeError(
        `Cannot send a request with timeoutMs ${req.timeoutMs}: it must be positive`,
      );
    }
    const limits = {
      maxBodyBytes: req.maxBodyBytes ?? 65536,
      excerptBytes: req.excerptBytes ?? 1024,
      onBody: req.onBody,
    };
    // setTimeout fires at once beyond 2^31-1 ms; nobody means more than 24 days.
    const timeoutMs = Math.min(req.timeoutMs, 2_147_483_647);
    const deadline = new Deadline(timeoutMs, req.signal);
    let sent: Sent;
    try {
      sent = await Promise.race([
        this.#exchange({ target, bytes, limits, deadline }),
        deadline.expired,
      ]);
    } finally {
      deadline.dispose();
    }
    const { read } = sent;
    return {
      status: read.head.status,
      headers: read.head.headers,
      excerpt: decoder.decode(read.excerpt),
      bodyBytes: read.bodyBytes,
      truncated: read.truncated,
      durationMs: Math.round(performance.now() - started),
      address: sent.address,
      reused: sent.reused,
    };
  }

  /** Closes idle sockets and timers; later responses are not pooled. */
  close(): void {
    this.#pool.close();
  }

  async #exchange(x: Exchange): Promise<Sent> {
    const { target, deadline: d } = x;
    const addresses = await allowedAddresses(target, {
      resolver: this.#resolver,
      allowPrivate: this.#rules.allowPrivate,
      deadline: d,
    });
    for (const ip of addresses) {
      const pooled = this.#pool.take(poolKey(target, ip));
      if (pooled === undefined) continue;
      try {
        return await this.#send(x, pooled, { reused: true });
      } catch (err) {
        // The server may have closed the idle socket: if it failed before
        // any response byte, retry exactly once on a fresh connection.
        const stale = err instanceof EgressError && err.kind === "network" &&
          pooled.received === 0;
        if (d.error !== null || !stale) throw err;
      }
      break;
    }
    const conn = await dial(target, addresses, {
      deadline: d,
      caCerts: this.#caCerts,
    });
    return await this.#send(x, conn, { reused: false });
  }

  async #send(
    x: Exchange,
    conn: Connection,
    options: { reused: boolean },
  ): Promise<Sent> {
    const d = x.deadline;
    d.hold(conn);
    try {
      await conn.write(x.bytes);
      const read = await readResponse(conn, x.limits);
      d.release();
      if (read.reusable) this.#pool.put(conn);
      else conn.close();
      return { read, address: conn.address, reused: options.reused };
    } catch (err) {
      conn.close();
      if (d.error !== null) throw d.error;
      if (err instanceof EgressError) throw err;
      throw new EgressError("network", reasonOf(err), { cause: err });
    }
  }
}

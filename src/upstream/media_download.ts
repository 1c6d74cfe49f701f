// Downloads inbound media from the upstream's media hosts as a stream.
// Reference §5: the URL from GET /{media-id} is on Meta's CDN
// (lookaside.fbsbx.com) and answers only with the channel's bearer token, so
// MEDIA_DOWNLOAD_HOSTS is exactly where the token may go besides the Graph API;
// a URL (or redirect) to any other host is refused before connecting. The
// SSRF-guarded egress client dials only checked public addresses.
import { type EgressClient, EgressError } from "../egress/http_client.ts";
import { type DownloadedMedia, UpstreamError } from "./graph_api.ts";
import { classifyGraphError, parseJson } from "./graph_errors.ts";

/** Meta's media CDN host (reference §5). */
export const DEFAULT_MEDIA_HOSTS: readonly string[] = ["lookaside.fbsbx.com"];

export interface MediaDownloadRules {
  egress: EgressClient;
  /** Exact host names, or `*.suffix` for any subdomain. */
  hosts: readonly string[];
  /** One deadline for the whole download (the URL itself lives 5 minutes). */
  timeoutMs: number;
}

const MAX_REDIRECTS = 3;
const REDIRECTS: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const SUBJECT = "the media download";

/** True when `host` (as in URL.hostname) is on the list. */
export function isMediaHost(host: string, hosts: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  return hosts.some((h) =>
    h.startsWith("*.") ? name.endsWith(h.slice(1)) : name === h
  );
}

/**
 * Starts the download and resolves once the upstream answers 2xx: `body`
 * then streams the bytes (never held whole) and errors with an UpstreamError
 * if the transfer fails or passes maxBytes. Follows up to 3 redirects, each
 * checked like the first URL.
 */
export async function downloadMediaStream(
  rules: MediaDownloadRules,
  request: {
    accessToken: string;
    url: string;
    maxBytes: number;
    signal?: AbortSignal;
  },
): Promise<DownloadedMedia> {
  let url = request.url;
  for (let hop = 0;; hop++) {
    const step = await downloadOnce(rules, { ...request, url });
    if (!("location" in step)) return step;
    if (hop === MAX_REDIRECTS) {
      throw new UpstreamError(
        `Cannot download media: more than ${MAX_REDIRECTS} redirects`,
        { category: "invalid_response", retryable: false },
      );
    }
    url = step.location;
  }
}

async function downloadOnce(
  rules: MediaDownloadRules,
  request: {
    accessToken: string;
    url: string;
    maxBytes: number;
    signal?: AbortSignal;
  },
): Promise<DownloadedMedia | { location: string }> {
  const { url, maxBytes } = request;
  assertMediaHost(url, rules.hosts);
  const body = new PushStream();
  let failure: UpstreamError | undefined;
  let answered!: (headers: Headers) => void;
  const head = new Promise<Headers>((resolve) => answered = resolve);
  const finished = rules.egress.request({
    method: "GET",
    url,
    headers: [["Authorization", `Bearer ${request.accessToken}`]],
    timeoutMs: rules.timeoutMs,
    // One byte over the limit tells "too large" from "exactly the limit".
    maxBodyBytes: maxBytes + 1,
    excerptBytes: 4096,
    signal: request.signal,
    onBody: ({ status, headers }) => {
      if (status < 200 || status > 299) return undefined;
      if (Number(headers.get("content-length")) > maxBytes) {
        failure = tooLarge(maxBytes);
        throw failure;
      }
      answered(headers);
      return (chunk) => body.write(chunk);
    },
  }).then((res) => {
    if (res.status >= 200 && res.status <= 299) {
      if (res.bodyBytes > maxBytes) throw tooLarge(maxBytes);
      body.close();
      return null;
    }
    const location = res.headers.get("location");
    if (REDIRECTS.has(res.status) && location) {
      return { location: new URL(location, url).href };
    }
    throw classifyGraphError(res.status, parseJson(res.excerpt), res.headers, {
      subject: SUBJECT,
    });
  }).catch((err: unknown) => {
    const error = failure ?? asUpstreamError(err);
    body.error(error);
    throw error;
  });
  const step = await Promise.race([
    head.then((headers) => ({ headers })),
    finished,
  ]);
  if (step !== null && "location" in step) return step;
  // From here on a failure reaches the reader through the body.
  finished.catch(() => {});
  const headers = step?.headers ?? await head;
  return { body: body.readable, contentType: headers.get("content-type") };
}

/** Refuses a URL whose host is not a media host, so the token never leaves for it. */
function assertMediaHost(url: string, hosts: readonly string[]): void {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    throw new UpstreamError("Cannot download media: the URL is not valid", {
      category: "invalid_response",
      retryable: false,
    });
  }
  if (!isMediaHost(host, hosts)) {
    throw new UpstreamError(
      `Cannot download media from "${host}": it is not a media host (MEDIA_DOWNLOAD_HOSTS: ${
        hosts.join(", ")
      })`,
      { category: "media_host_not_allowed", retryable: false },
    );
  }
}

function asUpstreamError(err: unknown): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const blocked = err instanceof EgressError &&
    (err.kind === "blocked" || err.kind === "invalid_url");
  return new UpstreamError(
    `Cannot download media: ${(err as Error)?.message ?? String(err)}`,
    {
      category: blocked ? "media_host_not_allowed" : "network",
      retryable: !blocked,
      cause: err,
    },
  );
}

function tooLarge(maxBytes: number): UpstreamError {
  return new UpstreamError(
    `Cannot download media: it is larger than ${maxBytes} bytes`,
    { category: "media_too_large", retryable: false },
  );
}

/** A readable fed by awaited writes: a write waits while the reader is one chunk behind. */
class PushStream {
  readonly readable: ReadableStream<Uint8Array>;
  #controller!: ReadableStreamDefaultController<Uint8Array>;
  #wake: (() => void) | undefined;
  #cancelled: unknown;
  #ended = false;

  constructor() {
    this.readable = new ReadableStream<Uint8Array>({
      start: (controller) => {
        this.#controller = controller;
      },
      pull: () => this.#resume(),
      cancel: (reason) => {
        this.#cancelled = reason ?? new Error("The reader cancelled");
        this.#resume();
      },
    }, { highWaterMark: 1 });
  }

  /** Copies the chunk (the caller reuses its buffer) and waits for room. */
  async write(chunk: Uint8Array): Promise<void> {
    if (this.#cancelled !== undefined) throw this.#cancelled;
    this.#controller.enqueue(chunk.slice());
    if ((this.#controller.desiredSize ?? 0) <= 0) {
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
    if (this.#cancelled !== undefined) throw this.#cancelled;
  }

  close(): void {
    if (this.#end()) this.#controller.close();
  }

  error(err: unknown): void {
    if (this.#end()) this.#controller.error(err);
  }

  #end(): boolean {
    const open = !this.#ended && this.#cancelled === undefined;
    this.#ended = true;
    this.#resume();
    return open;
  }

  #resume(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

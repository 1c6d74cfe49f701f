// Downloads inbound media from the upstream's media hosts, chunk by chunk.
// Reference §5: the URL from GET /{media-id} is on Meta's CDN
// (lookaside.fbsbx.com) and answers only with the channel's bearer token, so
// MEDIA_DOWNLOAD_HOSTS is exactly where the token may go besides the Graph API;
// a URL (or redirect) to any other host is refused before connecting. The
// SSRF-guarded egress client dials only checked public addresses.
import {
  type EgressClient,
  EgressError,
  type EgressResponse,
} from "../egress/http_client.ts";
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

/** True when `host` (as in URL.hostname) is on the list. */
export function isMediaHost(host: string, hosts: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  return hosts.some((h) =>
    h.startsWith("*.") ? name.endsWith(h.slice(1)) : name === h
  );
}

/**
 * Streams the media at `url` into `write`, chunk by chunk as it arrives (the
 * chunk is the connection's buffer: only valid until the write settles), and
 * fails with an UpstreamError past maxBytes. Follows up to 3 redirects, each
 * checked like the first URL. What `write` throws is rethrown as is.
 */
export async function downloadMediaInto(
  rules: MediaDownloadRules,
  request: {
    accessToken: string;
    url: string;
    maxBytes: number;
    signal?: AbortSignal;
    write: (chunk: Uint8Array) => Promise<void>;
  },
): Promise<DownloadedMedia> {
  const { maxBytes } = request;
  let url = request.url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    assertMediaHost(url, rules.hosts);
    let failure: { error: unknown } | undefined;
    const write = async (chunk: Uint8Array) => {
      try {
        await request.write(chunk);
      } catch (error) {
        failure = { error };
        throw error;
      }
    };
    let res: EgressResponse;
    try {
      res = await rules.egress.request({
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
            failure = { error: tooLarge(maxBytes) };
            throw failure.error;
          }
          return write;
        },
      });
    } catch (err) {
      throw failure ? failure.error : asUpstreamError(err);
    }
    if (res.status >= 200 && res.status <= 299) {
      if (res.bodyBytes > maxBytes) throw tooLarge(maxBytes);
      return { contentType: res.headers.get("content-type") };
    }
    const location = res.headers.get("location");
    if (!REDIRECTS.has(res.status) || !location) {
      throw classifyGraphError(
        res.status,
        parseJson(res.excerpt),
        res.headers,
        { subject: "the media download" },
      );
    }
    url = new URL(location, url).href;
  }
  throw new UpstreamError(
    `Cannot download media: more than ${MAX_REDIRECTS} redirects`,
    { category: "invalid_response", retryable: false },
  );
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

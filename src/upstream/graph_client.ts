import type {
  DownloadedMedia,
  GraphApi,
  GraphAuth,
  MediaInfo,
  SendResult,
} from "./graph_api.ts";
import { UpstreamError } from "./graph_api.ts";
import { classifyGraphError, parseJson } from "./graph_errors.ts";
import { EgressClient } from "../egress/http_client.ts";
import {
  DEFAULT_MEDIA_HOSTS,
  downloadMediaInto,
  type MediaDownloadRules,
} from "./media_download.ts";
import { CallDeadline } from "./call_deadline.ts";

export interface GraphClientOptions {
  /** META_GRAPH_URL, e.g. https://graph.facebook.com/v22.0 or http://127.0.0.1:PORT/v22.0. */
  baseUrl: string;
  fetch?: typeof fetch;
  /** Per-call deadline; default 15 s. */
  timeoutMs?: number;
  /** Media downloads: the SSRF-guarded client and the hosts allowed; default Meta's CDN, public https only. */
  media?: { egress: EgressClient; hosts: readonly string[] };
  /** Deadline of one whole media download; default 5 minutes (the URL's lifetime). */
  mediaTimeoutMs?: number;
}

interface CallOptions {
  method: "GET" | "POST";
  body?: unknown;
  /** A multipart body instead of JSON (uploads). */
  form?: FormData;
  /** This call's deadline instead of the client's (uploads take longer). */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** Names the call in error messages: "the message", "the request". */
  subject: string;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_MEDIA_TIMEOUT_MS = 300_000;

/** The real Graph API client (also used against the simulator). */
export function createGraphClient(options: GraphClientOptions): GraphApi {
  const base = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? globalThis.fetch;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let media: MediaDownloadRules | undefined;
  const mediaRules = () =>
    media ??= {
      egress: options.media?.egress ??
        new EgressClient({ allowPrivate: false, allowHttp: false }),
      hosts: options.media?.hosts ?? DEFAULT_MEDIA_HOSTS,
      timeoutMs: options.mediaTimeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS,
    };

  async function request(
    url: string,
    auth: GraphAuth,
    call: CallOptions,
    deadline: CallDeadline,
  ): Promise<Response> {
    let init: RequestInit;
    try {
      init = buildRequest(url, auth, call);
    } catch (err) {
      throw localError(err, `Cannot build ${call.subject} for the Graph API`);
    }
    try {
      return await doFetch(url, { ...init, signal: deadline.signal });
    } catch (err) {
      // fetch reports network failures as TypeError and aborts as DOMException;
      // anything else (RangeError...) is a fault on this side, not the network's.
      if (
        deadline.timedOut || err instanceof TypeError ||
        err instanceof DOMException
      ) {
        throw networkError(err, { timedOut: deadline.timedOut, timeoutMs });
      }
      throw localError(err, `Cannot send ${call.subject} to the Graph API`);
    }
  }

  async function json(
    url: string,
    auth: GraphAuth,
    call: CallOptions,
  ): Promise<Record<string, unknown>> {
    const deadline = new CallDeadline(call.timeoutMs ?? timeoutMs, call.signal);
    let res: Response;
    let text: string;
    try {
      res = await request(url, auth, call, deadline);
      try {
        text = await res.text();
      } catch (err) {
        throw networkError(err, { timedOut: false, timeoutMs });
      }
    } finally {
      deadline.end();
    }
    const body = parseJson(text);
    if (!res.ok) {
      throw classifyGraphError(res.status, body, res.headers, {
        subject: call.subject,
      });
    }
    if (typeof body !== "object" || body === null) {
      throw invalidResponse(`Graph API answered ${call.subject} with no JSON`);
    }
    return body as Record<string, unknown>;
  }

  return {
    async sendMessage(auth, message, opts = {}): Promise<SendResult> {
      const body = await json(messagesUrl(base, auth), auth, {
        method: "POST",
        body: { messaging_product: "whatsapp", ...message },
        signal: opts.signal,
        subject: "the message",
      });
      const sent = firstOf(body.messages);
      if (typeof sent?.id !== "string" || sent.id === "") {
        throw invalidResponse("Graph API accepted the message without a wamid");
      }
      const contact = firstOf(body.contacts);
      return {
        wamid: sent.id,
        waId: typeof contact?.wa_id === "string" ? contact.wa_id : null,
        messageStatus: typeof sent.message_status === "string"
          ? sent.message_status
          : null,
      };
    },

    async uploadMedia(auth, file, opts = {}): Promise<{ id: string }> {
      const form = new FormData();
      form.set("messaging_product", "whatsapp");
      form.set("type", file.mimeType);
      form.set("file", file.data, file.fileName);
      const body = await json(
        `${base}/${encodeURIComponent(auth.phoneNumberId)}/media`,
        auth,
        {
          method: "POST",
          form,
          signal: opts.signal,
          subject: "the media upload",
          timeoutMs: options.mediaTimeoutMs ?? DEFAULT_MEDIA_TIMEOUT_MS,
        },
      );
      if (typeof body.id !== "string" || body.id === "") {
        throw invalidResponse(
          "Graph API accepted the upload without a media id",
        );
      }
      return { id: body.id };
    },

    async markRead(auth, wamid, opts = {}): Promise<void> {
      await json(messagesUrl(base, auth), auth, {
        method: "POST",
        body: {
          messaging_product: "whatsapp",
          status: "read",
          message_id: wamid,
          ...(opts.typing ? { typing_indicator: { type: "text" } } : {}),
        },
        signal: opts.signal,
        subject: "the read receipt",
      });
    },

    async getMediaInfo(auth, mediaId, opts = {}): Promise<MediaInfo> {
      const body = await json(
        `${base}/${encodeURIComponent(mediaId)}`,
        auth,
        { method: "GET", signal: opts.signal, subject: "the media lookup" },
      );
      if (typeof body.url !== "string" || body.url === "") {
        throw invalidResponse(
          `Graph API returned no URL for media "${mediaId}"`,
        );
      }
      const size = Number(body.file_size);
      return {
        url: body.url,
        mimeType: typeof body.mime_type === "string"
          ? body.mime_type
          : "application/octet-stream",
        sha256: typeof body.sha256 === "string" ? body.sha256 : null,
        fileSize: body.file_size === undefined || body.file_size === null ||
            !Number.isFinite(size)
          ? null
          : size,
      };
    },

    downloadMedia(auth, url, opts): Promise<DownloadedMedia> {
      return downloadMediaInto(mediaRules(), {
        accessToken: auth.accessToken,
        url,
        ...opts,
      });
    },
  };
}

/**
 * Everything that can fail on this side before a byte is sent: the body's
 * JSON, the URL, the header values. Done apart from fetch so such a failure
 * is never mistaken for an unreachable upstream.
 */
function buildRequest(
  url: string,
  auth: GraphAuth,
  call: CallOptions,
): RequestInit {
  new URL(url);
  const headers = new Headers({ Authorization: `Bearer ${auth.accessToken}` });
  // A FormData body sets its own multipart Content-Type with the boundary.
  if (call.form) return { method: call.method, headers, body: call.form };
  if (call.body !== undefined) headers.set("Content-Type", "application/json");
  return {
    method: call.method,
    headers,
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  };
}

function messagesUrl(base: string, auth: GraphAuth): string {
  return `${base}/${encodeURIComponent(auth.phoneNumberId)}/messages`;
}

function firstOf(value: unknown): Record<string, unknown> | undefined {
  const first = Array.isArray(value) ? value[0] : undefined;
  return typeof first === "object" && first !== null
    ? first as Record<string, unknown>
    : undefined;
}

function networkError(
  err: unknown,
  info: { timedOut: boolean; timeoutMs: number },
): UpstreamError {
  const message = info.timedOut
    ? `Graph API did not answer within ${info.timeoutMs} ms`
    : err instanceof DOMException && err.name === "AbortError"
    ? "Graph API call was aborted"
    : `Cannot reach the Graph API: ${(err as Error)?.message ?? String(err)}`;
  return new UpstreamError(message, {
    category: "network",
    retryable: true,
    cause: err,
  });
}

/** A failure on this side, not the network's: retrying cannot help. */
function localError(err: unknown, what: string): UpstreamError {
  const why = err instanceof Error ? err.message : String(err);
  return new UpstreamError(`${what}: ${why}`, {
    category: "local_error",
    retryable: false,
    cause: err,
  });
}

function invalidResponse(message: string): UpstreamError {
  return new UpstreamError(message, {
    category: "invalid_response",
    retryable: false,
  });
}

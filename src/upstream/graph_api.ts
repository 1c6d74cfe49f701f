import { AppError } from "../errors.ts";

/** Credentials of one business number on the Graph API. */
export interface GraphAuth {
  /** The upstream phone number id (a numeric string). */
  phoneNumberId: string;
  accessToken: string;
}

export interface SendResult {
  wamid: string;
  /** The normalised WhatsApp id of the recipient, when the API reports it. */
  waId: string | null;
  /** `accepted` or `held_for_quality_assessment` on template sends; null when absent. */
  messageStatus: string | null;
}

export interface MediaInfo {
  /** Short-lived (about 5 minutes) download URL; needs the same bearer token. */
  url: string;
  mimeType: string;
  sha256: string | null;
  fileSize: number | null;
}

export interface DownloadedMedia {
  contentType: string | null;
}

/** The WhatsApp Cloud API calls the program makes; every failure is an UpstreamError. */
export interface GraphApi {
  /**
   * POST /{phoneNumberId}/messages. `message` is the Cloud API body without
   * messaging_product: {to, type, <type>: {...}, context?, biz_opaque_callback_data?}.
   */
  sendMessage(
    auth: GraphAuth,
    message: Record<string, unknown>,
    opts?: { signal?: AbortSignal },
  ): Promise<SendResult>;
  /** Marks an inbound message (and every earlier one in that chat) read; `typing` also shows the typing indicator. */
  markRead(
    auth: GraphAuth,
    wamid: string,
    opts?: { typing?: boolean; signal?: AbortSignal },
  ): Promise<void>;
  /** GET /{mediaId}: where to download an inbound media object. */
  getMediaInfo(
    auth: GraphAuth,
    mediaId: string,
    opts?: { signal?: AbortSignal },
  ): Promise<MediaInfo>;
  /**
   * POST /{phoneNumberId}/media: uploads a file for sends by `id` (Meta keeps
   * it 30 days); answers Meta's media id.
   */
  uploadMedia(
    auth: GraphAuth,
    file: { data: Blob; mimeType: string; fileName: string },
    opts?: { signal?: AbortSignal },
  ): Promise<{ id: string }>;
  /**
   * Streams media bytes from a media host (never another: the token goes with the request) into `write`,
   * awaited per chunk (a chunk is only valid until then); rejects above maxBytes (category media_too_large,
   * permanent). What `write` throws is rethrown as is.
   */
  downloadMedia(
    auth: GraphAuth,
    url: string,
    opts: {
      maxBytes: number;
      signal?: AbortSignal;
      write: (chunk: Uint8Array) => Promise<void>;
    },
  ): Promise<DownloadedMedia>;
}

export interface UpstreamErrorOptions {
  /** Internal category, e.g. `template_not_found` (see graph_errors.ts). */
  category: string;
  upstreamCode?: number | null;
  httpStatus?: number | null;
  /** The failure is upstream throttling: the send governor should slow down. */
  throttled?: boolean;
  retryable?: boolean;
  retryAfterMs?: number;
  details?: unknown;
  cause?: unknown;
}

/**
 * A failed Graph API call. Code UPSTREAM_UNAVAILABLE for network failures and
 * transient upstream failures (HTTP 5xx, 131000...), UPSTREAM_ERROR otherwise;
 * `retryable` tells a job whether to retry.
 */
export class UpstreamError extends AppError {
  readonly upstreamCode: number | null;
  readonly category: string;
  readonly httpStatus: number | null;
  readonly throttled: boolean;

  constructor(message: string, options: UpstreamErrorOptions) {
    // A 5xx with a permanent code (3, 131045) is our problem, not an outage.
    const unavailable = options.category === "network" ||
      options.category === "upstream_transient";
    super(unavailable ? "UPSTREAM_UNAVAILABLE" : "UPSTREAM_ERROR", message, {
      details: options.details,
      cause: options.cause,
      retryable: options.retryable ?? false,
      retryAfterMs: options.retryAfterMs,
    });
    this.upstreamCode = options.upstreamCode ?? null;
    this.category = options.category;
    this.httpStatus = options.httpStatus ?? null;
    this.throttled = options.throttled ?? false;
  }
}

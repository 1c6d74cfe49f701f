import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { AppError, type ErrorCode } from "../errors.ts";
import { isDatabaseBusy } from "../db/busy.ts";
import type { AppEnv } from "./env.ts";

/** The only place that maps error codes to HTTP statuses. */
export const STATUS_BY_CODE = {
  VALIDATION_ERROR: 400,
  INVALID_PHONE: 400,
  INVALID_MESSAGE_TYPE: 400,
  MISSING_REQUIRED_FIELD: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_SCOPE: 403,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONTACT_NOT_FOUND: 404,
  CONVERSATION_NOT_FOUND: 404,
  MESSAGE_NOT_FOUND: 404,
  TEMPLATE_NOT_FOUND: 422,
  MEDIA_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  WEBHOOK_DISABLED: 409,
  EVENT_EXPIRED: 410,
  CONTACT_ALREADY_EXISTS: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SERVICE_WINDOW_EXPIRED: 422,
  INVALID_CHANNEL: 422,
  INVALID_AGENT: 422,
  CHANNEL_NOT_CONNECTED: 422,
  TEMPLATE_NOT_APPROVED: 422,
  WEBHOOK_LIMIT_REACHED: 422,
  CHANNEL_RESTRICTED: 422,
  RATE_LIMITED: 429,
  UPSTREAM_ERROR: 502,
  UPSTREAM_UNAVAILABLE: 503,
  SERVICE_UNAVAILABLE: 503,
  INTERNAL_ERROR: 500,
} as const satisfies Record<ErrorCode, ContentfulStatusCode>;

const CODE_BY_HTTP_STATUS: Record<number, ErrorCode> = {
  400: "VALIDATION_ERROR",
  401: "UNAUTHORIZED",
  404: "NOT_FOUND",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
};

export function errorBody(
  c: Context<AppEnv>,
  code: ErrorCode,
  message: string,
  details?: unknown,
) {
  return {
    error: details === undefined
      ? { code, message }
      : { code, message, details },
    meta: { requestId: c.get("requestId") },
  };
}

/**
 * One onError: an AppError below 500 keeps its code and message; every 5xx
 * (an AppError's 502/503 included) and anything else gets the fixed
 * INTERNAL_ERROR body, as the spec requires, with the cause only in the log.
 * A 5xx keeps its status, so a client still retries a 503.
 */
export function handleError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof AppError) {
    const status = STATUS_BY_CODE[err.code];
    if (err.retryAfterMs !== undefined) {
      c.header(
        "Retry-After",
        String(Math.max(1, Math.ceil(err.retryAfterMs / 1000))),
      );
    }
    if (status === 503 && err.cause === undefined) {
      // A state, not a failure with an error behind it: not ready (a probe
      // every few seconds), a restart needed (the missing part was logged
      // once, at error, by program_parts.ts), the webhook gate refusing a
      // flood. A warning with the reason; an error and its stack each time
      // filled the log. A 503 with a cause (storage or Meta unreachable, a
      // part that failed to load under this request) stays an error below.
      c.get("log")?.warn("Request refused: service unavailable", {
        code: err.code,
        reason: err.message,
      });
      return internal(c, status);
    }
    if (status >= 500) {
      c.get("log")?.error("Request failed", { err, code: err.code });
      return internal(c, status);
    }
    // RFC 7235: a 401 names the scheme that would be accepted.
    if (status === 401 && !c.res.headers.has("WWW-Authenticate")) {
      c.header("WWW-Authenticate", "Bearer");
    }
    return c.json(errorBody(c, err.code, err.message, err.details), status);
  }
  if (err instanceof HTTPException && err.status < 500) {
    const code = CODE_BY_HTTP_STATUS[err.status] ?? "VALIDATION_ERROR";
    const message = err.status === 413
      ? "Cannot read request body: it is larger than the limit"
      : err.status === 400
      ? "Cannot parse request body: it is not valid JSON"
      : err.message || "Request rejected";
    return c.json(errorBody(c, code, message), STATUS_BY_CODE[code]);
  }
  if (isDatabaseBusy(err)) {
    // The database stayed busy through the writers' retries (another
    // instance's long write, a migration): nothing was written, so the
    // client may simply try again. A 503 with Retry-After says so.
    c.get("log")?.warn("Request refused: database busy", { err });
    c.header("Retry-After", "1");
    return internal(c, 503);
  }
  c.get("log")?.error("Unhandled error", { err });
  return internal(c);
}

function internal(
  c: Context<AppEnv>,
  status: ContentfulStatusCode = 500,
): Response {
  return c.json(
    errorBody(c, "INTERNAL_ERROR", "Internal server error"),
    status,
  );
}

/** The one error type of the program. HTTP status mapping lives only in src/http/errors.ts. */
export type ErrorCode =
  | "VALIDATION_ERROR"
  | "INVALID_PHONE"
  | "INVALID_MESSAGE_TYPE"
  | "MISSING_REQUIRED_FIELD"
  | "UNAUTHORIZED"
  | "INSUFFICIENT_SCOPE"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONTACT_NOT_FOUND"
  | "CONVERSATION_NOT_FOUND"
  | "MESSAGE_NOT_FOUND"
  | "TEMPLATE_NOT_FOUND"
  | "MEDIA_NOT_FOUND"
  | "WEBHOOK_NOT_FOUND"
  | "DELIVERY_NOT_FOUND"
  | "WEBHOOK_DISABLED"
  | "WEBHOOK_LIMIT_REACHED"
  | "EVENT_EXPIRED"
  | "CONTACT_ALREADY_EXISTS"
  | "IDEMPOTENCY_KEY_REUSED"
  | "IDEMPOTENCY_KEY_IN_USE"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "SERVICE_WINDOW_EXPIRED"
  | "INVALID_CHANNEL"
  | "INVALID_AGENT"
  | "CHANNEL_NOT_CONNECTED"
  | "TEMPLATE_NOT_APPROVED"
  | "CHANNEL_RESTRICTED"
  | "RATE_LIMITED"
  | "UPSTREAM_ERROR"
  | "UPSTREAM_UNAVAILABLE"
  | "SERVICE_UNAVAILABLE"
  | "INTERNAL_ERROR";

export interface AppErrorOptions {
  details?: unknown;
  cause?: unknown;
  /** Whether a job that hit this error should be retried. */
  retryable?: boolean;
  /** Milliseconds the caller should wait before retrying (429, upstream throttling). */
  retryAfterMs?: number;
}

export class AppError extends Error {
  override readonly name = "AppError";
  readonly code: ErrorCode;
  readonly details: unknown;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.code = code;
    this.details = options.details;
    this.retryable = options.retryable ?? false;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** Turns anything thrown into an Error. */
export function coerceError(err: unknown): Error {
  if (err instanceof Error) return err;
  return new Error(typeof err === "string" ? err : JSON.stringify(err));
}

/**
 * Thrown by a job's work to say "not now": the job runs again after
 * `delayMs` without spending an attempt (upstream throttling, a status
 * report whose message is not committed yet).
 */
export class RetryLater extends Error {
  override readonly name: string = "RetryLater";
  constructor(readonly delayMs: number, message: string) {
    super(message);
  }
}

/**
 * RetryLater that holds the job: it waits on a named condition (`key`,
 * e.g. `template:<id>` for a template Meta paused) and runs again after
 * `delayMs`, or as soon as whoever clears the condition wakes the jobs held
 * on it (wakeHeld in jobs/queue_settle.ts); still no attempt spent. The job
 * keeps the time it was first held (JobRow.heldSince), so its handler can
 * give up after a bound however often it looked meanwhile.
 */
export class HoldJob extends RetryLater {
  override readonly name = "HoldJob";
  constructor(readonly key: string, delayMs: number, message: string) {
    super(delayMs, message);
  }
}

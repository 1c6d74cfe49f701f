import { parseJsonWithoutNul } from "../text.ts";
import { UpstreamError } from "./graph_api.ts";

/** How the program treats one Graph error code (reference §3.3). */
export interface GraphErrorRule {
  category: string;
  retryable: boolean;
  throttled?: boolean;
  /** Default wait before a retry when the response names none. */
  retryAfterMs?: number;
}

const AUTH: GraphErrorRule = { category: "auth_invalid", retryable: false };
const DENIED: GraphErrorRule = {
  category: "permission_denied",
  retryable: false,
};
const INVALID: GraphErrorRule = {
  category: "invalid_request",
  retryable: false,
};
const TRANSIENT: GraphErrorRule = {
  category: "upstream_transient",
  retryable: true,
};
const TEMPLATE_PARAMS: GraphErrorRule = {
  category: "template_params_invalid",
  retryable: false,
};
const BLOCKED: GraphErrorRule = {
  category: "account_blocked",
  retryable: false,
};
const NOT_READY: GraphErrorRule = {
  category: "number_not_ready",
  retryable: false,
};
const FLOW: GraphErrorRule = { category: "flow_unavailable", retryable: false };

/** App and WABA quota errors clear slowly: wait a minute before the next try. */
const QUOTA_BACKOFF_MS = 60_000;
const THROUGHPUT_BACKOFF_MS = 250; // the limit is per second: a quarter second clears a burst
/** Meta allows about one message per 6 s to the same user. */
const PAIR_BACKOFF_MS = 6_000;

const RULES = new Map<number, GraphErrorRule>([
  [0, AUTH],
  [190, AUTH],
  [3, DENIED],
  [10, DENIED],
  [131005, DENIED],
  [4, {
    category: "throttled_app",
    retryable: true,
    throttled: true,
    retryAfterMs: QUOTA_BACKOFF_MS,
  }],
  [80007, {
    category: "throttled_waba",
    retryable: true,
    throttled: true,
    retryAfterMs: QUOTA_BACKOFF_MS,
  }],
  [80008, {
    category: "throttled_mgmt",
    retryable: true,
    throttled: true,
    retryAfterMs: QUOTA_BACKOFF_MS,
  }],
  // User, Page and custom rate limits, and the Pages and Instagram
  // business-use-case quotas (reference §8.5): stop calling for a while.
  ...[17, 32, 613, 80001, 80002].map((code): [number, GraphErrorRule] => [
    code,
    {
      category: "throttled_social",
      retryable: true,
      throttled: true,
      retryAfterMs: QUOTA_BACKOFF_MS,
    },
  ]),
  [130429, {
    category: "throttled_throughput",
    retryable: true,
    throttled: true,
    retryAfterMs: THROUGHPUT_BACKOFF_MS,
  }],
  [131056, {
    category: "throttled_pair",
    retryable: true,
    throttled: true,
    retryAfterMs: PAIR_BACKOFF_MS,
  }],
  // Quality-based: retrying makes it worse, campaigns must stop.
  [131048, { category: "throttled_spam", retryable: false }],
  [131047, { category: "window_closed", retryable: false }],
  [131026, { category: "recipient_unreachable", retryable: false }],
  // Meta says "retry after 24 h or more": not a job retry, the message failed.
  [131049, { category: "marketing_capped", retryable: false }],
  [131050, { category: "marketing_opted_out", retryable: false }],
  [130472, { category: "marketing_experiment", retryable: false }],
  // Some templates (one-tap, zero-tap, copy-code auth) still need a phone number (§4.7).
  [131062, { category: "bsuid_recipient_unsupported", retryable: false }],
  [131051, INVALID],
  [131052, { category: "inbound_media_failed", retryable: false }],
  [131053, { category: "media_rejected", retryable: false }],
  [100, INVALID],
  [131008, INVALID],
  [131009, INVALID],
  [131021, INVALID],
  [135000, INVALID],
  [131031, BLOCKED],
  [368, BLOCKED],
  [131042, { category: "billing_issue", retryable: false }],
  [131045, NOT_READY],
  [133010, NOT_READY],
  [133000, NOT_READY],
  [133005, NOT_READY],
  [133006, NOT_READY],
  [133007, NOT_READY],
  [133008, NOT_READY],
  [133009, NOT_READY],
  [133015, NOT_READY],
  [133016, NOT_READY],
  [131057, TRANSIENT],
  [131000, TRANSIENT],
  [131016, TRANSIENT],
  [1, TRANSIENT],
  [2, TRANSIENT],
  [133004, TRANSIENT],
  [132000, TEMPLATE_PARAMS],
  [132005, TEMPLATE_PARAMS],
  [132007, TEMPLATE_PARAMS],
  [132012, TEMPLATE_PARAMS],
  [132001, { category: "template_not_found", retryable: false }],
  [132015, { category: "template_paused", retryable: false }],
  [132016, { category: "template_disabled", retryable: false }],
  [132068, FLOW],
  [132069, FLOW],
]);

/** The rule for a Graph error code, or undefined when the table does not know it. */
export function graphErrorRule(code: number): GraphErrorRule | undefined {
  const rule = RULES.get(code);
  if (rule) return rule;
  if (code >= 200 && code <= 299) return DENIED;
  return undefined;
}

/** Category and retryability of an asynchronous failure (a `failed` status webhook's errors[0].code). */
export function classifyStatusError(
  code: number,
): { category: string; retryable: boolean } {
  const rule = graphErrorRule(code);
  if (!rule) return { category: "unknown", retryable: false };
  return { category: rule.category, retryable: rule.retryable };
}

/** A rule for a response whose body names no known code. */
function ruleForHttpStatus(status: number, transient: boolean): GraphErrorRule {
  if (status >= 500 || transient) return TRANSIENT;
  if (status === 429) {
    return {
      category: "throttled_app",
      retryable: true,
      throttled: true,
      retryAfterMs: QUOTA_BACKOFF_MS,
    };
  }
  if (status === 401) return AUTH;
  if (status === 403) return DENIED;
  if (status === 404) return { category: "not_found", retryable: false };
  return INVALID;
}

/** Milliseconds from a Retry-After header (seconds or an HTTP date). */
export function parseRetryAfter(
  value: string | null | undefined,
  now = Date.now(),
): number | undefined {
  if (!value) return undefined;
  const trimmed = value.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

interface GraphErrorBody {
  message?: unknown;
  code?: unknown;
  error_subcode?: unknown;
  error_data?: { details?: unknown };
  is_transient?: unknown;
  fbtrace_id?: unknown;
}

function errorObject(body: unknown): GraphErrorBody | undefined {
  if (typeof body !== "object" || body === null) return undefined;
  const error = (body as { error?: unknown }).error;
  return typeof error === "object" && error !== null
    ? error as GraphErrorBody
    : undefined;
}

/**
 * Turns a non-2xx Graph response into an UpstreamError: category and
 * retryability from the code table, then from the HTTP status.
 */
export function classifyGraphError(
  httpStatus: number,
  body: unknown,
  headers?: Headers | null,
  options: { subject?: string } = {},
): UpstreamError {
  const error = errorObject(body);
  const code = typeof error?.code === "number" ? error.code : null;
  const rule = (code === null ? undefined : graphErrorRule(code)) ??
    ruleForHttpStatus(httpStatus, error?.is_transient === true);
  const retryAfterMs = rule.retryable
    ? parseRetryAfter(headers?.get("retry-after")) ?? rule.retryAfterMs
    : undefined;
  const subject = options.subject ?? "the request";
  const said = typeof error?.message === "string" && error.message !== ""
    ? error.message
    : code !== null
    ? `(#${code})`
    : `HTTP ${httpStatus}`;
  const details = typeof error?.error_data?.details === "string"
    ? error.error_data.details
    : undefined;
  return new UpstreamError(`Graph API rejected ${subject}: ${said}`, {
    category: rule.category,
    upstreamCode: code,
    httpStatus,
    throttled: rule.throttled ?? false,
    retryable: rule.retryable,
    retryAfterMs,
    details: {
      upstreamCode: code,
      ...(typeof error?.error_subcode === "number"
        ? { subcode: error.error_subcode }
        : {}),
      ...(details ? { details } : {}),
      ...(typeof error?.fbtrace_id === "string"
        ? { fbtraceId: error.fbtrace_id }
        : {}),
    },
  });
}

/**
 * A response body as JSON, or undefined when it is not JSON. A NUL in its
 * strings becomes U+FFFD, as in every text from Meta (src/text.ts).
 */
export function parseJson(text: string): unknown {
  try {
    return parseJsonWithoutNul(text);
  } catch {
    return undefined;
  }
}

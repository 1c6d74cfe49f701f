/** Webhook subscriptions: types, limits and the rules on custom headers. */

import type { EventType } from "../events/event_repo.ts";

export const WEBHOOK_EVENTS = [
  "message.received",
  "message.status_changed",
  "conversation.created",
  "contact.created",
] as const satisfies readonly EventType[];

export const WEBHOOK_USER_AGENT = "Service-Webhooks/1.0";
export const WEBHOOK_VERSION = "v1";
/** The whole exchange (connect, TLS, headers, body) must end within this. */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** The optional GET of a redirect's Location gets this long. */
export const REDIRECT_PROBE_TIMEOUT_MS = 2_000;
/** Consecutive failed attempts that disable a subscription. */
export const AUTO_DISABLE_AFTER = 10;
export const MAX_CUSTOM_HEADERS = 10;
export const MAX_HEADER_NAME_LENGTH = 256;
export const MAX_HEADER_VALUE_LENGTH = 1024;
export const MAX_URL_LENGTH = 2048;
export const MAX_DESCRIPTION_LENGTH = 500;
/** Shown instead of a custom header's value. */
export const MASKED_VALUE = "********";

/**
 * Names a subscription cannot set (compared case-insensitively): the spec's
 * list, plus what frames the request or identifies the sender, so a custom
 * header can never change how the body is read or who signed it. The
 * server's own X-Service-* names are refused by prefix (RESERVED_PREFIX).
 */
export const FORBIDDEN_HEADER_NAMES: ReadonlySet<string> = new Set([
  "content-type",
  "content-length",
  "host",
  "user-agent",
  "connection",
  "keep-alive",
  "transfer-encoding",
  "te",
  "trailer",
  "upgrade",
  "expect",
  "proxy-connection",
]);

/**
 * Lowercase prefix of the headers the server sets on every delivery
 * (X-Service-Signature, X-Service-Webhook-Id...). The whole prefix is the
 * server's, so a name it adds later cannot already be a subscription's.
 */
export const RESERVED_PREFIX = "x-service-";

/** An RFC 7230 token. */
const TOKEN_REGEXP = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Control characters other than tab (line breaks included), and DEL. */
// deno-lint-ignore no-control-regex
const CONTROL_REGEXP = /[\u0000-\u0008\u000a-\u001f\u007f]/;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface Webhook {
  id: string;
  accountId: string;
  url: string;
  events: WebhookEvent[];
  description: string | null;
  enabled: boolean;
  /** Custom header names in the order given; values are sealed apart. */
  headerNames: string[];
  consecutiveFailures: number;
  lastDeliveryAt: string | null;
  lastDeliveryStatus: "success" | "failed" | null;
  disabledAt: string | null;
  /** "auto" after consecutive failures; null when enabled or disabled by hand. */
  disabledReason: "auto" | null;
  createdAt: string;
  updatedAt: string;
}

/** One broken header rule: the field path (`headers.X-Name`) and why. */
export interface HeaderProblem {
  path: string;
  message: string;
}

/** Every problem with a custom header set, in the order found (empty when valid). */
export function headerProblems(
  headers: Record<string, unknown>,
): HeaderProblem[] {
  const problems: HeaderProblem[] = [];
  const names = Object.keys(headers);
  if (names.length > MAX_CUSTOM_HEADERS) {
    problems.push({
      path: "headers",
      message:
        `must have at most ${MAX_CUSTOM_HEADERS} entries, got ${names.length}`,
    });
  }
  const seen = new Map<string, string>();
  for (const name of names) {
    const path = `headers.${name}`;
    const value = headers[name];
    const lower = name.toLowerCase();
    if (name.length === 0 || name.length > MAX_HEADER_NAME_LENGTH) {
      problems.push({
        path,
        message:
          `header names are 1 to ${MAX_HEADER_NAME_LENGTH} characters, got ${name.length}`,
      });
    } else if (!TOKEN_REGEXP.test(name)) {
      problems.push({
        path,
        message:
          "is not a valid header name (RFC 7230 token: letters, digits and !#$%&'*+-.^_`|~)",
      });
    } else if (FORBIDDEN_HEADER_NAMES.has(lower)) {
      problems.push({
        path,
        message: `"${name}" is set by the server and cannot be overridden`,
      });
    } else if (lower.startsWith(RESERVED_PREFIX)) {
      problems.push({
        path,
        message:
          `"${name}" cannot be set: the X-Service-* names are reserved for the server`,
      });
    } else if (seen.has(lower)) {
      problems.push({
        path,
        message: `repeats "${
          seen.get(lower)
        }": header names are case-insensitive`,
      });
    }
    seen.set(lower, seen.get(lower) ?? name);
    if (typeof value !== "string") {
      problems.push({ path, message: "must be a string" });
    } else if (value.length > MAX_HEADER_VALUE_LENGTH) {
      problems.push({
        path,
        message:
          `must be at most ${MAX_HEADER_VALUE_LENGTH} characters, got ${value.length}`,
      });
    } else if (CONTROL_REGEXP.test(value)) {
      problems.push({
        path,
        message: "must not contain line breaks or control characters",
      });
    }
  }
  return problems;
}

/** Header names with masked values, as GET shows them; null when there are none. */
export function maskedHeaders(names: string[]): Record<string, string> | null {
  if (names.length === 0) return null;
  return Object.fromEntries(names.map((n) => [n, MASKED_VALUE]));
}

/** Keeps the first spelling of each kind, in the order given. */
export function uniqueEvents(events: readonly WebhookEvent[]): WebhookEvent[] {
  return [...new Set(events)];
}

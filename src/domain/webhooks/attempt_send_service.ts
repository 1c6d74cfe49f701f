/** One HTTP exchange of a delivery attempt: headers, signature, the POST, and the optional redirect probe. */
import {
  type EgressClient,
  EgressError,
  type EgressResponse,
} from "../../egress/http_client.ts";
import type { DeliveryOutcome } from "../../metrics/app_metrics.ts";
import { parseRetryAfter } from "../../upstream/graph_errors.ts";
import { RESPONSE_EXCERPT_BYTES } from "./delivery.ts";
import { envelopeText, signatureHeader } from "./envelope.ts";
import {
  DELIVERY_TIMEOUT_MS,
  REDIRECT_PROBE_TIMEOUT_MS,
  WEBHOOK_USER_AGENT,
  WEBHOOK_VERSION,
} from "./webhook.ts";

export interface OutgoingAttempt {
  url: string;
  webhookId: string;
  event: string;
  eventId: string;
  attempt: number;
  deliveredAt: string;
  firstAttemptAt: string;
  dataText: string;
  secret: string;
  customHeaders: Record<string, string>;
  /** Unix seconds of the signature. */
  timestamp: number;
}

export interface SentAttempt {
  outcome: DeliveryOutcome;
  /** 2xx and 3xx are successes; the redirect is never re-POSTed. */
  success: boolean;
  statusCode: number | null;
  errorMessage: string | null;
  durationMs: number;
  excerpt: string | null;
  /** From Retry-After on a failed response. */
  retryAfterMs?: number;
  /** A failure no retry can mend (the event's data is gone). */
  permanent?: boolean;
  redirectLocation: string | null;
  redirectStatusCode: number | null;
}

const encoder = new TextEncoder();
const MAX_LOCATION_CHARS = 2_048;

/** The request headers, exactly the spec's list in its order, then the subscription's own. */
export function deliveryHeaders(
  a: OutgoingAttempt,
  body: string,
): Array<[string, string]> {
  return [
    ["Content-Type", "application/json"],
    ["User-Agent", WEBHOOK_USER_AGENT],
    ["X-Service-Signature", signatureHeader(a.secret, a.timestamp, body)],
    ["X-Service-Webhook-Id", a.webhookId],
    ["X-Service-Webhook-Event", a.event],
    ["X-Service-Webhook-Version", WEBHOOK_VERSION],
    ["X-Service-Webhook-Attempt", String(a.attempt)],
    ["X-Service-First-Attempt-At", a.firstAttemptAt],
    ...Object.entries(a.customHeaders),
  ];
}

function classOf(status: number): DeliveryOutcome {
  if (status < 300) return "2xx";
  if (status < 400) return "3xx";
  if (status < 500) return "4xx";
  return "5xx";
}

function failureOf(err: unknown, durationMs: number): SentAttempt {
  const kind = err instanceof EgressError ? err.kind : "network";
  const outcome: DeliveryOutcome = kind === "timeout"
    ? "timeout"
    : kind === "blocked"
    ? "blocked"
    : "error";
  const message = err instanceof Error && err.message
    ? err.message
    : "The request failed";
  return {
    outcome,
    success: false,
    statusCode: null,
    errorMessage: message,
    durationMs,
    excerpt: null,
    redirectLocation: null,
    redirectStatusCode: null,
  };
}

/**
 * POSTs the signed envelope; never throws. A 3xx with a Location is then
 * probed with one GET (revalidated by the same guard, no signature or custom
 * headers, 2 s) only to log where it points; the probe never changes the result.
 */
export async function sendAttempt(
  egress: Pick<EgressClient, "request">,
  a: OutgoingAttempt,
  options: { signal?: AbortSignal } = {},
): Promise<SentAttempt> {
  const body = envelopeText({
    event: a.event,
    eventId: a.eventId,
    webhookId: a.webhookId,
    deliveredAt: a.deliveredAt,
    attempt: a.attempt,
    dataText: a.dataText,
  });
  const started = performance.now();
  let res: EgressResponse;
  try {
    res = await egress.request({
      method: "POST",
      url: a.url,
      headers: deliveryHeaders(a, body),
      body: encoder.encode(body),
      timeoutMs: DELIVERY_TIMEOUT_MS,
      excerptBytes: RESPONSE_EXCERPT_BYTES,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (err) {
    return failureOf(err, Math.round(performance.now() - started));
  }
  const outcome = classOf(res.status);
  const success = res.status < 400;
  const sent: SentAttempt = {
    outcome,
    success,
    statusCode: res.status,
    errorMessage: success ? null : `The receiver answered HTTP ${res.status}`,
    durationMs: Math.round(res.durationMs),
    excerpt: res.excerpt,
    redirectLocation: null,
    redirectStatusCode: null,
  };
  if (!success) {
    const after = parseRetryAfter(res.headers.get("retry-after"));
    if (after !== undefined) sent.retryAfterMs = after;
  }
  const location = res.headers.get("location");
  if (outcome === "3xx" && location) {
    await probeRedirect(egress, sent, new URL(a.url), location);
  }
  return sent;
}

async function probeRedirect(
  egress: Pick<EgressClient, "request">,
  sent: SentAttempt,
  base: URL,
  location: string,
): Promise<void> {
  let target: URL;
  try {
    target = new URL(location, base);
  } catch {
    sent.redirectLocation = location.slice(0, MAX_LOCATION_CHARS);
    sent.errorMessage = "Redirect not probed: Location is not a URL";
    return;
  }
  sent.redirectLocation = target.href.slice(0, MAX_LOCATION_CHARS);
  try {
    const probe = await egress.request({
      method: "GET",
      url: target,
      headers: [["User-Agent", WEBHOOK_USER_AGENT]],
      timeoutMs: REDIRECT_PROBE_TIMEOUT_MS,
      maxBodyBytes: 4_096,
      excerptBytes: 0,
    });
    sent.redirectStatusCode = probe.status;
  } catch (err) {
    sent.errorMessage = `Redirect not followed: ${
      err instanceof Error ? err.message : "the GET of Location failed"
    }`;
  }
}

import assert from "node:assert/strict";
import {
  classifyGraphError,
  classifyStatusError,
  parseRetryAfter,
} from "../../src/upstream/graph_errors.ts";

function body(code: number, extra: Record<string, unknown> = {}) {
  return {
    error: {
      message: `(#${code}) Title`,
      type: "OAuthException",
      code,
      error_data: { messaging_product: "whatsapp", details: "Some details" },
      fbtrace_id: "Atrace",
      ...extra,
    },
  };
}

Deno.test("classifyGraphError maps codes to categories and retryability", () => {
  const cases: [number, number, string, boolean][] = [
    [400, 130429, "throttled_throughput", true],
    [400, 131056, "throttled_pair", true],
    [400, 4, "throttled_app", true],
    [400, 80007, "throttled_waba", true],
    [500, 131000, "upstream_transient", true],
    [503, 133004, "upstream_transient", true],
    [400, 1, "upstream_transient", true],
    [500, 131057, "upstream_transient", true],
    [404, 132001, "template_not_found", false],
    [400, 132000, "template_params_invalid", false],
    [400, 132015, "template_paused", false],
    [400, 132016, "template_disabled", false],
    [401, 190, "auth_invalid", false],
    [403, 10, "permission_denied", false],
    [403, 250, "permission_denied", false],
    [400, 131047, "window_closed", false],
    [400, 131026, "recipient_unreachable", false],
    [400, 100, "invalid_request", false],
    [400, 131053, "media_rejected", false],
    [403, 368, "account_blocked", false],
    [500, 3, "permission_denied", false],
  ];
  for (const [status, code, category, retryable] of cases) {
    const err = classifyGraphError(status, body(code));
    assert.equal(err.category, category, `code ${code}`);
    assert.equal(err.retryable, retryable, `code ${code}`);
    assert.equal(err.upstreamCode, code);
    assert.equal(err.httpStatus, status);
  }
});

Deno.test("classifyGraphError sets throttling and its backoff", () => {
  const throughput = classifyGraphError(400, body(130429));
  assert.equal(throughput.throttled, true);
  assert.equal(throughput.retryAfterMs, 250);
  const withHeader = classifyGraphError(
    400,
    body(130429),
    new Headers({ "Retry-After": "7" }),
  );
  assert.equal(withHeader.retryAfterMs, 7000);
  const pair = classifyGraphError(400, body(131056));
  assert.equal(pair.throttled, true);
  assert.equal(pair.retryAfterMs, 6000);
  const app = classifyGraphError(400, body(4));
  assert.ok(app.throttled && app.retryAfterMs! > pair.retryAfterMs!);
  const permanent = classifyGraphError(404, body(132001));
  assert.equal(permanent.throttled, false);
  assert.equal(permanent.retryAfterMs, undefined);
});

Deno.test("classifyGraphError keeps the message, details and error codes", () => {
  const err = classifyGraphError(400, body(132000, { error_subcode: 2494055 }));
  assert.equal(err.message, "Graph API rejected the request: (#132000) Title");
  assert.equal(err.code, "UPSTREAM_ERROR");
  assert.deepEqual(err.details, {
    upstreamCode: 132000,
    subcode: 2494055,
    details: "Some details",
    fbtraceId: "Atrace",
  });
  const send = classifyGraphError(404, body(132001), null, {
    subject: "the message",
  });
  assert.equal(send.message, "Graph API rejected the message: (#132001) Title");
});

Deno.test("classifyGraphError falls back to the HTTP status without a known code", () => {
  const html = classifyGraphError(502, "<html>Bad gateway</html>");
  assert.equal(html.category, "upstream_transient");
  assert.equal(html.retryable, true);
  assert.equal(html.code, "UPSTREAM_UNAVAILABLE");
  assert.equal(html.upstreamCode, null);
  assert.equal(html.message, "Graph API rejected the request: HTTP 502");
  const unknown = classifyGraphError(400, body(987654));
  assert.equal(unknown.category, "invalid_request");
  assert.equal(unknown.retryable, false);
  const transient = classifyGraphError(
    400,
    body(987654, { is_transient: true }),
  );
  assert.equal(transient.retryable, true);
  const limited = classifyGraphError(
    429,
    null,
    new Headers({ "Retry-After": "2" }),
  );
  assert.equal(limited.throttled, true);
  assert.equal(limited.retryAfterMs, 2000);
  assert.equal(classifyGraphError(401, null).category, "auth_invalid");
  assert.equal(classifyGraphError(404, null).category, "not_found");
});

Deno.test("classifyStatusError classifies asynchronous failures", () => {
  assert.deepEqual(classifyStatusError(131047), {
    category: "window_closed",
    retryable: false,
  });
  assert.equal(classifyStatusError(131026).category, "recipient_unreachable");
  assert.equal(classifyStatusError(131049).category, "marketing_capped");
  assert.equal(classifyStatusError(131050).category, "marketing_opted_out");
  assert.equal(classifyStatusError(131053).category, "media_rejected");
  assert.deepEqual(classifyStatusError(131000), {
    category: "upstream_transient",
    retryable: true,
  });
  assert.deepEqual(classifyStatusError(424242), {
    category: "unknown",
    retryable: false,
  });
});

Deno.test("parseRetryAfter reads seconds and HTTP dates", () => {
  assert.equal(parseRetryAfter("3"), 3000);
  assert.equal(parseRetryAfter("0.5"), 500);
  assert.equal(parseRetryAfter(null), undefined);
  assert.equal(parseRetryAfter("soon"), undefined);
  const now = Date.parse("2026-01-01T00:00:00Z");
  assert.equal(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now), 10_000);
});

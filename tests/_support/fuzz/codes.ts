// The error codes a client may see, with the status each one is documented
// with. The fuzzer's oracle: every error response carries one of these.

/**
 * The code table of the spec's "Errors" section
 * (/work/shared/spec/business-messaging-api-v2.md, "## Errors"), in its order.
 */
export const SPEC_ERROR_CODES = [
  "SERVICE_WINDOW_EXPIRED",
  "INVALID_CHANNEL",
  "CHANNEL_NOT_CONNECTED",
  "INVALID_MESSAGE_TYPE",
  "INVALID_PHONE",
  "MISSING_REQUIRED_FIELD",
  "VALIDATION_ERROR",
  "CONTACT_NOT_FOUND",
  "CONTACT_ALREADY_EXISTS",
  "INTERNAL_ERROR",
] as const;

/**
 * Status of every documented code: the spec leaves statuses open ("HTTP status
 * codes for each code in the table: not shown"), so they and the codes the spec
 * does not list come from DESIGN.md §3 "Errors and statuses". "404 NOT_FOUND or
 * the specific CONTACT_NOT_FOUND etc." is read as the `<RESOURCE>_NOT_FOUND`
 * family of the resources the API serves. The last three are the replay codes
 * and the assignee code docs/api.md documents. Deliberately not read from src/http/errors.ts: the
 * oracle holds the implementation to the documents, not to itself.
 */
export const DOCUMENTED_STATUS: Readonly<Record<string, number>> = {
  VALIDATION_ERROR: 400,
  INVALID_PHONE: 400,
  INVALID_MESSAGE_TYPE: 400,
  MISSING_REQUIRED_FIELD: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_SCOPE: 403,
  NOT_FOUND: 404,
  CONTACT_NOT_FOUND: 404,
  CONVERSATION_NOT_FOUND: 404,
  MESSAGE_NOT_FOUND: 404,
  MEDIA_NOT_FOUND: 404,
  WEBHOOK_NOT_FOUND: 404,
  DELIVERY_NOT_FOUND: 404,
  CONTACT_ALREADY_EXISTS: 409,
  IDEMPOTENCY_KEY_REUSED: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  SERVICE_WINDOW_EXPIRED: 422,
  INVALID_CHANNEL: 422,
  CHANNEL_NOT_CONNECTED: 422,
  TEMPLATE_NOT_FOUND: 422,
  TEMPLATE_NOT_APPROVED: 422,
  RATE_LIMITED: 429,
  INTERNAL_ERROR: 500,
  // docs/webhooks.md, POST /webhooks/:id/replay/:deliveryId.
  WEBHOOK_DISABLED: 409,
  EVENT_EXPIRED: 410,
  // docs/webhooks.md, POST /webhooks (and its /api/v1 alias) past the account's limit.
  WEBHOOK_LIMIT_REACHED: 422,
  // docs/api.md, "Errors": PATCH /conversations/:id.
  INVALID_AGENT: 422,
};

/**
 * Routes outside the API, whose callers hold no API key, refuse with 403
 * FORBIDDEN (docs/api.md, "Errors"): a failed Meta
 * handshake (reference/meta-graph-api.md says "answer 403"), /metrics off
 * loopback without METRICS_TOKEN, a media download without a valid signature.
 */
export const OUTSIDE_API_STATUS: Readonly<Record<string, number>> = {
  FORBIDDEN: 403,
};

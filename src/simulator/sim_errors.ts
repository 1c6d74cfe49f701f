import { randomBase62 } from "../crypto.ts";

/** A send the Graph API would reject: the code and error_data.details to answer with. */
export interface Rejection {
  code: number;
  details: string;
}

/** HTTP status, title and default details of a Graph error code (reference §3.3). */
interface ErrorSpec {
  http: number;
  title: string;
  details?: string;
}

const TABLE: Record<number, ErrorSpec> = {
  0: { http: 401, title: "AuthException" },
  1: { http: 400, title: "API Unknown" },
  2: { http: 503, title: "API Service" },
  3: { http: 500, title: "API Method" },
  4: { http: 400, title: "Application request limit reached" },
  10: { http: 403, title: "Permission Denied" },
  100: { http: 400, title: "Invalid parameter" },
  190: {
    http: 401,
    title: "Invalid OAuth access token - Cannot parse access token",
  },
  200: { http: 403, title: "Permissions error" },
  368: { http: 403, title: "Temporarily blocked for policies violations" },
  80001: {
    http: 400,
    title: "There have been too many calls to this Page account",
  },
  80002: {
    http: 400,
    title: "There have been too many calls to this Instagram account",
  },
  80007: { http: 400, title: "Rate limit issues" },
  80008: {
    http: 400,
    title: "There have been too many calls to this WhatsApp Business account",
  },
  130429: {
    http: 400,
    title: "Rate limit hit",
    details:
      "Message failed to send because there were too many messages sent from this phone number in a short period of time",
  },
  130472: { http: 400, title: "User's number is part of an experiment" },
  131000: { http: 500, title: "Something went wrong" },
  131005: { http: 403, title: "Access denied" },
  131008: { http: 400, title: "Required parameter is missing" },
  131009: { http: 400, title: "Parameter value is not valid" },
  131016: { http: 500, title: "Service unavailable" },
  131021: { http: 400, title: "Recipient cannot be sender" },
  131026: {
    http: 400,
    title: "Message undeliverable",
    details: "Message Undeliverable.",
  },
  131031: { http: 403, title: "Business Account locked" },
  131042: { http: 400, title: "Business eligibility payment issue" },
  131045: { http: 500, title: "Incorrect certificate" },
  131047: {
    http: 400,
    title: "Re-engagement message",
    details:
      "Message failed to send because more than 24 hours have passed since the customer last replied to this number.",
  },
  131048: { http: 400, title: "Spam rate limit hit" },
  131049: {
    http: 400,
    title:
      "This message was not delivered to maintain healthy ecosystem engagement.",
  },
  131050: {
    http: 400,
    title:
      "Unable to deliver the message. This recipient has chosen to stop receiving marketing messages on WhatsApp from your business",
  },
  131051: { http: 400, title: "Unsupported message type" },
  131062: {
    http: 400,
    title:
      "Business-scoped User ID recipients are not supported for this message",
  },
  131052: { http: 400, title: "Media download error" },
  131053: { http: 400, title: "Media upload error" },
  131056: {
    http: 400,
    title: "(Business Account, Consumer Account) pair rate limit hit",
  },
  131057: { http: 500, title: "Account in maintenance mode" },
  132000: {
    http: 400,
    title: "Number of parameters does not match the expected number of params",
  },
  132001: {
    http: 404,
    title: "Template name does not exist in the translation",
  },
  132005: { http: 400, title: "Template Hydrated Text Too Long" },
  132007: { http: 400, title: "Template Format Character Policy Violated" },
  132012: { http: 400, title: "Template Parameter Format Mismatch" },
  132015: { http: 400, title: "Template is Paused" },
  132016: { http: 400, title: "Template is Disabled" },
  132068: { http: 400, title: "Flow is in blocked state" },
  132069: { http: 400, title: "Flow is in throttled state" },
  133004: { http: 503, title: "Server temporarily unavailable" },
  133010: { http: 400, title: "Phone number Not Registered" },
  135000: { http: 400, title: "Generic user error" },
};

function specOf(code: number): ErrorSpec {
  return TABLE[code] ?? { http: 400, title: "Simulated error" };
}

/** The HTTP status the Graph API uses for a code (132001 is 404, 190 is 401). */
export function httpStatusOf(code: number): number {
  return specOf(code).http;
}

/** A synchronous Graph error response (reference §3.1). */
export function graphErrorResponse(
  code: number,
  opts: { details?: string; subcode?: number; status?: number } = {},
): Response {
  const spec = specOf(code);
  const body = {
    error: {
      message: `(#${code}) ${spec.title}`,
      type: "OAuthException",
      code,
      ...(opts.subcode !== undefined ? { error_subcode: opts.subcode } : {}),
      error_data: {
        messaging_product: "whatsapp",
        details: opts.details ?? spec.details ?? spec.title,
      },
      fbtrace_id: randomBase62(23),
    },
  };
  return Response.json(body, { status: opts.status ?? spec.http });
}

/** The errors[] element of a `failed` status webhook (reference §3.2). */
export function asyncErrorObject(code: number): Record<string, unknown> {
  const spec = specOf(code);
  return {
    code,
    title: spec.title,
    message: spec.title,
    error_data: { details: spec.details ?? spec.title },
    href:
      "https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/",
  };
}

/**
 * The app-level calls of the fake Graph API, made with the app token
 * `APP_ID|APP_SECRET`: GET /debug_token (what a token may do) and GET/POST
 * /{app-id}/subscriptions (the app's webhook callback and fields, checked
 * with Meta's verification handshake).
 */
import { requireBearer } from "./messages_route.ts";
import { graphErrorResponse } from "./sim_errors.ts";
import type { SimulatorState } from "./state.ts";
import { ALL_SCOPES, managementState, takeFailure } from "./waba_state.ts";

export function bearerOf(req: Request): string {
  return (req.headers.get("authorization") ?? "").replace(/^Bearer\s+/i, "")
    .trim();
}

/** Whether the call carries the app token `APP_ID|APP_SECRET`. */
export function isAppToken(state: SimulatorState, req: Request): boolean {
  return bearerOf(req) ===
    `${managementState(state).appId}|${state.appSecret}`;
}

/** GET /debug_token?input_token=, with the app token. */
export function handleDebugToken(state: SimulatorState, req: Request) {
  const refused = requireBearer(req);
  if (refused) return refused;
  const url = new URL(req.url);
  const m = managementState(state);
  m.calls.push({
    method: "GET",
    path: url.pathname + url.search,
    at: Date.now(),
  });
  const injected = takeFailure(state, url.pathname);
  if (injected !== undefined) return graphErrorResponse(injected);
  if (!isAppToken(state, req)) {
    return graphErrorResponse(190, {
      details: "Invalid OAuth access token signature (the app token)",
    });
  }
  const input = url.searchParams.get("input_token") ?? "";
  const token = m.tokens.get(input) ??
    { valid: input !== "", scopes: ALL_SCOPES, wabaIds: [], expiresAt: 0 };
  const valid = token.valid &&
    !(token.expiresAt > 0 && token.expiresAt * 1000 < Date.now());
  return Response.json({
    data: {
      app_id: m.appId,
      type: "SYSTEM_USER",
      application: "Demo App",
      expires_at: token.expiresAt,
      is_valid: valid,
      scopes: token.scopes,
      granular_scopes: token.scopes.map((scope) => ({
        scope,
        ...(token.wabaIds.length ? { target_ids: token.wabaIds } : {}),
      })),
    },
  });
}

export async function bodyOf(req: Request): Promise<Record<string, unknown>> {
  try {
    const parsed = await req.json();
    return typeof parsed === "object" && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

/** GET and POST /{app-id}/subscriptions, with the app token. */
export async function appSubscriptions(
  state: SimulatorState,
  req: Request,
): Promise<Response> {
  const m = managementState(state);
  const url = new URL(req.url);
  m.calls.push({ method: req.method, path: url.pathname, at: Date.now() });
  const injected = takeFailure(state, url.pathname);
  if (injected !== undefined) return graphErrorResponse(injected);
  if (!isAppToken(state, req)) {
    return graphErrorResponse(190, {
      details: "Invalid OAuth access token signature (the app token)",
    });
  }
  if (req.method === "GET") {
    const sub = m.appSubscription;
    return Response.json({
      data: sub
        ? [{
          object: "whatsapp_business_account",
          callback_url: sub.callbackUrl,
          active: true,
          fields: [...sub.fields].map((name) => ({ name, version: "v22.0" })),
        }]
        : [],
    });
  }
  const body = await bodyOf(req);
  const callbackUrl = String(body.callback_url ?? "");
  const verifyToken = String(body.verify_token ?? "");
  const fields = String(body.fields ?? "").split(",").map((f) => f.trim())
    .filter(Boolean);
  if (body.object !== "whatsapp_business_account" || !callbackUrl) {
    return graphErrorResponse(100, {
      details: "object and callback_url are required",
    });
  }
  // Meta checks the callback at once with the verification handshake.
  const check = new URL(callbackUrl);
  check.searchParams.set("hub.mode", "subscribe");
  check.searchParams.set("hub.verify_token", verifyToken);
  check.searchParams.set("hub.challenge", "1158201444");
  try {
    const res = await fetch(check);
    const text = await res.text();
    if (!res.ok || text !== "1158201444") {
      return graphErrorResponse(2200, {
        details:
          "Callback verification failed with the following errors: HTTP Status Code = " +
          res.status,
      });
    }
  } catch (err) {
    return graphErrorResponse(2200, {
      details: `Callback verification failed: ${(err as Error).message}`,
    });
  }
  m.appSubscription = { callbackUrl, verifyToken, fields: new Set(fields) };
  return Response.json({ success: true });
}

/**
 * The WhatsApp management calls of the fake Graph API (reference
 * meta-management.md §1, §3, §4): a WABA's templates (paged with cursors,
 * 25 by default), a template, a number's fields, a WABA's numbers and
 * subscribed apps, registration, debug_token and the app's webhook
 * subscriptions. Tokens, permissions and injected failures as Meta answers
 * them (190, 200/10, 4/80007, 100).
 */
import type { Context, Next } from "hono";
import { requireBearer } from "./messages_route.ts";
import { appSubscriptions, bearerOf, bodyOf } from "./app_routes.ts";
import { graphErrorResponse } from "./sim_errors.ts";
import type { RegisteredNumber, SimulatorState } from "./state.ts";
import {
  findTemplate,
  healthOf,
  managementState,
  type SimTemplate,
  takeFailure,
  wabaOf,
} from "./waba_state.ts";

const DEFAULT_PAGE = 25;
const MAX_PAGE = 1_000;

function unknownObject(id: string): Response {
  return graphErrorResponse(100, {
    status: 400,
    subcode: 33,
    details:
      `Unsupported get request. Object with ID '${id}' does not exist, cannot be loaded due to missing permissions, or does not support this operation`,
  });
}

/**
 * The refusal of a management call, or null: no token (190), an injected
 * failure, an invalid or expired token (190), a token without
 * whatsapp_business_management or without this WABA (200).
 */
function refuse(
  state: SimulatorState,
  req: Request,
  wabaId: string | null,
  scope = "whatsapp_business_management",
): Response | null {
  const unauthorized = requireBearer(req);
  if (unauthorized) return unauthorized;
  const url = new URL(req.url);
  const m = managementState(state);
  m.calls.push({
    method: req.method,
    path: url.pathname + url.search,
    at: Date.now(),
  });
  const injected = takeFailure(state, url.pathname);
  if (injected !== undefined) return graphErrorResponse(injected);
  const token = m.tokens.get(bearerOf(req));
  if (!token) return null;
  if (
    !token.valid ||
    (token.expiresAt > 0 && token.expiresAt * 1000 < Date.now())
  ) {
    return graphErrorResponse(190, {
      details: "Error validating access token: Session has expired",
    });
  }
  if (
    !token.scopes.includes(scope) ||
    (wabaId && token.wabaIds.length && !token.wabaIds.includes(wabaId))
  ) {
    return graphErrorResponse(200, {
      details: "The caller does not have permission on this object",
    });
  }
  return null;
}

function pick(
  object: Record<string, unknown>,
  fields: string | null,
): Record<string, unknown> {
  if (!fields) return object;
  const wanted = new Set(["id", ...fields.split(",").map((f) => f.trim())]);
  return Object.fromEntries(
    Object.entries(object).filter(([k]) => wanted.has(k)),
  );
}

/** A page of `items` from the `after` cursor, with Meta's paging object. */
function page<T>(items: T[], url: URL) {
  const asked = Number(url.searchParams.get("limit"));
  const limit = Math.min(MAX_PAGE, asked > 0 ? asked : DEFAULT_PAGE);
  const after = url.searchParams.get("after");
  const from = after ? Number(atob(after)) || 0 : 0;
  const slice = items.slice(from, from + limit);
  const end = from + slice.length;
  const next = new URL(url);
  next.searchParams.set("after", btoa(String(end)));
  return {
    data: slice,
    paging: {
      cursors: { before: btoa(String(from)), after: btoa(String(end)) },
      ...(end < items.length ? { next: next.href } : {}),
    },
  };
}

function templateJson(t: SimTemplate, fields: string | null) {
  return pick({ ...t } as Record<string, unknown>, fields);
}

function numberJson(
  state: SimulatorState,
  n: RegisteredNumber,
  fields: string | null,
) {
  const h = healthOf(state, n.phoneNumberId);
  const { pin: _pin, ...health } = h;
  return pick({
    id: n.phoneNumberId,
    display_phone_number: `+${n.displayPhoneNumber}`,
    ...health,
    // The deprecated name, still answered.
    messaging_limit_tier: h.whatsapp_business_manager_messaging_limit,
  }, fields);
}

function numbersOf(state: SimulatorState, wabaId: string): RegisteredNumber[] {
  return [...state.numbers.values()].filter((n) => n.wabaId === wabaId);
}

/**
 * GET /{id} and GET /{id}/{edge} for WABAs, numbers and templates; any
 * other id passes to the next handler (the media lookup shares the path).
 */
export function managementGraphHandler(state: SimulatorState) {
  return async (c: Context, next: Next) => {
    const id = c.req.param("id") ?? "";
    const edge = c.req.param("edge");
    const m = managementState(state);
    const url = new URL(c.req.url);
    const fields = url.searchParams.get("fields");
    const number = state.numbers.get(id);
    const template = findTemplate(state, id);
    const isWaba = m.wabas.has(id) ||
      [...state.numbers.values()].some((n) => n.wabaId === id);
    if (id === m.appId && edge === "subscriptions") {
      return appSubscriptions(state, c.req.raw);
    }
    if (!number && !template && !isWaba) return await next();
    const wabaId = isWaba ? id : number?.wabaId ?? template?.waba.id ?? null;
    const refused = refuse(
      state,
      c.req.raw,
      wabaId,
      edge === "whatsapp_business_profile"
        ? "whatsapp_business_messaging"
        : "whatsapp_business_management",
    );
    if (refused) return refused;
    if (number && edge === "whatsapp_business_profile") {
      return Response.json({
        data: [{ about: "Demo Business", messaging_product: "whatsapp" }],
      });
    }
    if (template && !edge) {
      return Response.json(templateJson(template.template, fields));
    }
    if (number && !edge) {
      return Response.json(numberJson(state, number, fields));
    }
    if (!isWaba) return unknownObject(`${id}/${edge}`);
    const waba = wabaOf(state, id);
    if (!edge) return Response.json({ id, name: waba.name });
    if (edge === "message_templates") {
      const name = url.searchParams.get("name");
      const status = url.searchParams.get("status");
      const list = waba.templates.filter((t) =>
        (!name || t.name.includes(name)) &&
        (!status || status.split(",").includes(t.status))
      );
      const answer = page(list, url);
      return Response.json({
        data: answer.data.map((t) => templateJson(t, fields)),
        paging: answer.paging,
      });
    }
    if (edge === "phone_numbers") {
      const answer = page(numbersOf(state, id), url);
      return Response.json({
        data: answer.data.map((n) => numberJson(state, n, fields)),
        paging: answer.paging,
      });
    }
    if (edge === "subscribed_apps") {
      return Response.json({
        data: [...waba.subscribedApps].map((appId) => ({
          whatsapp_business_api_data: {
            id: appId,
            link: "https://example.com",
            name: "Demo App",
          },
        })),
      });
    }
    return graphErrorResponse(100, {
      details: `Tried accessing nonexisting field (${edge})`,
    });
  };
}

/** POST /{waba-id}/subscribed_apps and POST /{phone-number-id}/register. */
export function managementPostHandler(state: SimulatorState) {
  return async (c: Context, next: Next) => {
    const id = c.req.param("id") ?? "";
    const edge = c.req.param("edge");
    const m = managementState(state);
    if (id === m.appId && edge === "subscriptions") {
      return await appSubscriptions(state, c.req.raw);
    }
    if (edge === "subscribed_apps") {
      const refused = refuse(state, c.req.raw, id);
      if (refused) return refused;
      wabaOf(state, id).subscribedApps.add(m.appId);
      return Response.json({ success: true });
    }
    if (edge === "register") {
      const number = state.numbers.get(id);
      const refused = refuse(state, c.req.raw, number?.wabaId ?? null);
      if (refused) return refused;
      if (!number) return unknownObject(id);
      const body = await bodyOf(c.req.raw);
      const pin = String(body.pin ?? "");
      if (body.messaging_product !== "whatsapp" || !/^\d{6}$/.test(pin)) {
        return graphErrorResponse(100, {
          details: "messaging_product and a 6-digit pin are required",
        });
      }
      const health = healthOf(state, id);
      if (health.pin && health.pin !== pin) {
        return graphErrorResponse(133005, {
          details: "Two step verification PIN Mismatch",
        });
      }
      health.pin = pin;
      health.status = "CONNECTED";
      health.platform_type = "CLOUD_API";
      return Response.json({ success: true });
    }
    return await next();
  };
}

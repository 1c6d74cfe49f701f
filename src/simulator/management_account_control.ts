/**
 * The control API of the simulator's management side for numbers, tokens,
 * the app and failures (/_sim): a number's health (announced with
 * phone_number_quality_update), any management webhook, tokens, injected
 * failures of the management calls, the app's webhook subscription.
 */
import { Hono } from "hono";
import { z } from "zod";
import { badRequest, parse } from "./control.ts";
import { emitManagementWebhook } from "./management_control.ts";
import type { SimulatorState } from "./state.ts";
import { healthOf, managementState } from "./waba_state.ts";

const HealthInput = z.strictObject({
  quality_rating: z.enum(["GREEN", "YELLOW", "RED", "UNKNOWN"]).optional(),
  throughput: z.enum(["STANDARD", "HIGH", "NOT_APPLICABLE"]).optional(),
  status: z.string().optional(),
  messaging_limit: z.string().optional(),
  verified_name: z.string().optional(),
  is_on_biz_app: z.boolean().optional(),
  event: z.string().optional(),
  time: z.number().int().optional(),
});
const WebhookInput = z.strictObject({
  field: z.string().min(1),
  value: z.record(z.string(), z.unknown()),
  time: z.number().int().optional(),
});
const FailInput = z.strictObject({
  code: z.number().int().nonnegative(),
  count: z.number().int().min(1).default(1),
  path: z.string().optional(),
  skip: z.number().int().min(0).optional(),
});
const TokenInput = z.strictObject({
  token: z.string().min(1),
  valid: z.boolean().default(true),
  scopes: z.array(z.string()).optional(),
  wabaIds: z.array(z.string()).default([]),
  expiresAt: z.number().int().min(0).default(0),
});

const AppInput = z.strictObject({
  subscription: z.strictObject({
    callbackUrl: z.string().min(1),
    verifyToken: z.string(),
    fields: z.array(z.string()),
  }).nullable(),
});

/** The event a number's change is announced with (phone_number_quality_update). */
function numberEvent(patch: z.infer<typeof HealthInput>): string {
  if (patch.event) return patch.event;
  if (patch.throughput === "HIGH") return "THROUGHPUT_UPGRADE";
  if (patch.quality_rating === "GREEN") return "UNFLAGGED";
  if (patch.quality_rating) return "FLAGGED";
  return "UPGRADE";
}

/** The /_sim routes of numbers, tokens, the app and injected failures. */
export function managementAccountControlRoutes(state: SimulatorState): Hono {
  const app = new Hono();
  const m = () => managementState(state);
  app.post("/numbers/:id/health", async (c) => {
    const parsed = await parse(c.req.raw, HealthInput);
    if ("error" in parsed) return parsed.error;
    const number = state.numbers.get(c.req.param("id"));
    if (!number) return badRequest("Unknown phone number id");
    const h = healthOf(state, number.phoneNumberId);
    const p = parsed.data;
    if (p.quality_rating) h.quality_rating = p.quality_rating;
    if (p.throughput) h.throughput = { level: p.throughput };
    if (p.status) h.status = p.status;
    if (p.verified_name) h.verified_name = p.verified_name;
    if (p.is_on_biz_app !== undefined) h.is_on_biz_app = p.is_on_biz_app;
    const old = h.whatsapp_business_manager_messaging_limit;
    if (p.messaging_limit) {
      h.whatsapp_business_manager_messaging_limit = p.messaging_limit;
    }
    const delivered = await emitManagementWebhook(state, {
      wabaId: number.wabaId,
      field: "phone_number_quality_update",
      time: p.time,
      value: {
        display_phone_number: number.displayPhoneNumber,
        event: numberEvent(p),
        current_limit: h.whatsapp_business_manager_messaging_limit,
        ...(p.messaging_limit ? { old_limit: old } : {}),
      },
    });
    return Response.json({ health: h, delivered });
  });
  app.post("/wabas/:id/webhook", async (c) => {
    const parsed = await parse(c.req.raw, WebhookInput);
    if ("error" in parsed) return parsed.error;
    const delivered = await emitManagementWebhook(state, {
      wabaId: c.req.param("id"),
      ...parsed.data,
    });
    return Response.json({ delivered });
  });
  app.post("/management/fail", async (c) => {
    const parsed = await parse(c.req.raw, FailInput);
    if ("error" in parsed) return parsed.error;
    m().failNext.push(parsed.data);
    return Response.json({ failNext: m().failNext });
  });
  app.get("/management/calls", () => Response.json({ calls: m().calls }));
  app.post("/tokens", async (c) => {
    const parsed = await parse(c.req.raw, TokenInput);
    if ("error" in parsed) return parsed.error;
    const { token, scopes, ...rest } = parsed.data;
    m().tokens.set(token, {
      ...rest,
      scopes: scopes ?? [
        "whatsapp_business_management",
        "whatsapp_business_messaging",
      ],
    });
    return Response.json({ token });
  });
  // The app's webhook subscription as if set in the app dashboard (no handshake).
  app.post("/app", async (c) => {
    const parsed = await parse(c.req.raw, AppInput);
    if ("error" in parsed) return parsed.error;
    m().appSubscription = parsed.data.subscription
      ? {
        ...parsed.data.subscription,
        fields: new Set(parsed.data.subscription.fields),
      }
      : null;
    return Response.json({ ok: true });
  });
  app.get("/app", () => {
    const sub = m().appSubscription;
    return Response.json({
      appId: m().appId,
      subscription: sub ? { ...sub, fields: [...sub.fields] } : null,
    });
  });
  return app;
}

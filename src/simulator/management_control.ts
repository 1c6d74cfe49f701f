/**
 * The control API of the simulator's management side (/_sim): WABAs and
 * their templates, a template's status, quality, components and category,
 * a number's quality and throughput, any management webhook, tokens and
 * injected failures. Each change Meta would announce is announced the same
 * way: a signed webhook to the callback URL, routed by entry[].id (the
 * WABA), posted before the control call answers.
 */
import { Hono } from "hono";
import { z } from "zod";
import { deliverSigned, RawJson } from "./callbacks.ts";
import { badRequest, parse } from "./control.ts";
import type { SimulatorState } from "./state.ts";
import {
  findTemplate,
  managementState,
  newTemplateId,
  type SimTemplate,
  type SimWaba,
  wabaOf,
} from "./waba_state.ts";

/**
 * Posts a management webhook for `wabaId` as Meta does: signed, `time` the
 * entry's, every `message_template_id` written as a JSON integer (Meta's
 * are, and past 2^53 a JS number cannot carry them).
 */
export async function emitManagementWebhook(
  state: SimulatorState,
  input: {
    wabaId: string;
    field: string;
    value: Record<string, unknown>;
    time?: number;
  },
) {
  const envelope = {
    object: "whatsapp_business_account",
    entry: [{
      id: input.wabaId,
      time: input.time ?? Math.floor(Date.now() / 1000),
      changes: [{ value: input.value, field: input.field }],
    }],
  };
  const text = JSON.stringify(envelope).replace(
    /"message_template_id":"(\d+)"/g,
    '"message_template_id":$1',
  );
  return await deliverSigned(
    state,
    new RawJson(text),
    { kind: "management", wamid: `${input.field}:${input.wabaId}` },
    { retry: false, signal: state.epoch.signal },
  );
}

/** A template by Meta's id (digits) or by name (and language), in any WABA or the one named. */
function templateRef(
  state: SimulatorState,
  ref: string,
  where: { wabaId?: string | undefined; language?: string | undefined },
): { waba: SimWaba; template: SimTemplate } | undefined {
  if (/^\d+$/.test(ref)) return findTemplate(state, ref);
  const m = managementState(state);
  const wabas = where.wabaId ? [wabaOf(state, where.wabaId)] : [
    ...m.wabas.values(),
  ];
  for (const waba of wabas) {
    const template = waba.templates.find((t) =>
      t.name === ref && (!where.language || t.language === where.language)
    );
    if (template) return { waba, template };
  }
  return undefined;
}

function templateEventValue(t: SimTemplate) {
  return {
    message_template_id: t.id,
    message_template_name: t.name,
    message_template_language: t.language,
  };
}

const Where = {
  wabaId: z.string().optional(),
  language: z.string().optional(),
  time: z.number().int().optional(),
};

const StatusInput = z.strictObject({
  ...Where,
  status: z.string().min(1),
  reason: z.string().optional(),
});
const QualityInput = z.strictObject({
  ...Where,
  score: z.enum(["GREEN", "YELLOW", "RED", "UNKNOWN"]),
});
const ComponentsInput = z.strictObject({
  ...Where,
  components: z.array(z.record(z.string(), z.unknown())),
});
const CategoryInput = z.strictObject({
  ...Where,
  category: z.enum(["MARKETING", "UTILITY", "AUTHENTICATION"]),
});
const TemplateInput = z.looseObject({
  id: z.string().regex(/^\d+$/).optional(),
  name: z.string().min(1),
  language: z.string().min(1),
  category: z.string().default("UTILITY"),
  status: z.string().default("APPROVED"),
  components: z.array(z.record(z.string(), z.unknown())).default([]),
});
const TemplatesInput = z.strictObject({
  templates: z.array(TemplateInput).optional(),
  /** Adds `count` approved templates `<prefix>_<n>`. */
  generate: z.strictObject({
    count: z.number().int().min(1).max(10_000),
    prefix: z.string().regex(/^[a-z0-9_]+$/).default("generated"),
  }).optional(),
});
const WabaInput = z.strictObject({
  id: z.string().regex(/^\d+$/),
  name: z.string().optional(),
  seed: z.enum(["demo", "empty"]).default("demo"),
});
/** The /_sim routes of WABAs and templates (mounted beside controlRoutes). */
export function managementControlRoutes(state: SimulatorState): Hono {
  const app = new Hono();
  const m = () => managementState(state);
  app.post("/wabas", async (c) => {
    const parsed = await parse(c.req.raw, WabaInput);
    if ("error" in parsed) return parsed.error;
    m().wabas.delete(parsed.data.id);
    const waba = wabaOf(state, parsed.data.id, parsed.data.seed);
    if (parsed.data.name) waba.name = parsed.data.name;
    return Response.json({ id: waba.id, templates: waba.templates.length });
  });
  app.get("/wabas/:id", (c) => {
    const waba = wabaOf(state, c.req.param("id"));
    return Response.json({
      id: waba.id,
      name: waba.name,
      templates: waba.templates,
      subscribedApps: [...waba.subscribedApps],
    });
  });
  app.post("/wabas/:id/templates", async (c) => {
    const parsed = await parse(c.req.raw, TemplatesInput);
    if ("error" in parsed) return parsed.error;
    const waba = wabaOf(state, c.req.param("id"));
    const added: SimTemplate[] = [];
    for (const t of parsed.data.templates ?? []) {
      added.push({ ...t, id: t.id ?? newTemplateId(state) } as SimTemplate);
    }
    const g = parsed.data.generate;
    for (let i = 1; g && i <= g.count; i++) {
      added.push({
        id: newTemplateId(state),
        name: `${g.prefix}_${String(i).padStart(4, "0")}`,
        language: "en_US",
        category: "UTILITY",
        status: "APPROVED",
        parameter_format: "POSITIONAL",
        components: [{
          type: "BODY",
          text: `Message ${i}: {{1}}`,
          example: { body_text: [["x"]] },
        }],
      });
    }
    waba.templates.push(...added);
    return Response.json({ added: added.length, total: waba.templates.length });
  });
  app.delete("/wabas/:id/templates/:ref", (c) => {
    const waba = wabaOf(state, c.req.param("id"));
    const ref = c.req.param("ref");
    const before = waba.templates.length;
    waba.templates = waba.templates.filter((t) =>
      t.id !== ref && t.name !== ref
    );
    return Response.json({ removed: before - waba.templates.length });
  });
  app.post("/templates/:ref/status", async (c) => {
    const parsed = await parse(c.req.raw, StatusInput);
    if ("error" in parsed) return parsed.error;
    const found = templateRef(state, c.req.param("ref"), parsed.data);
    if (!found) return badRequest("Unknown template");
    const event = parsed.data.status.toUpperCase();
    // FLAGGED and REINSTATED are events, not statuses.
    if (event === "REINSTATED") found.template.status = "APPROVED";
    else if (event !== "FLAGGED") found.template.status = event;
    const reason = parsed.data.reason ??
      (event === "REJECTED" ? "INVALID_FORMAT" : "NONE");
    if (event === "REJECTED") found.template.rejected_reason = reason;
    const delivered = await emitManagementWebhook(state, {
      wabaId: found.waba.id,
      field: "message_template_status_update",
      time: parsed.data.time,
      value: {
        event,
        ...templateEventValue(found.template),
        reason,
        message_template_category: found.template.category,
        ...(event === "PAUSED"
          ? {
            other_info: {
              title: "FIRST_PAUSE",
              description:
                "Your template has been paused for 3 hours because of low quality.",
            },
          }
          : {}),
      },
    });
    return Response.json({ template: found.template, delivered });
  });
  app.post("/templates/:ref/quality", async (c) => {
    const parsed = await parse(c.req.raw, QualityInput);
    if ("error" in parsed) return parsed.error;
    const found = templateRef(state, c.req.param("ref"), parsed.data);
    if (!found) return badRequest("Unknown template");
    const previous = found.template.quality_score?.score ?? "UNKNOWN";
    found.template.quality_score = {
      score: parsed.data.score,
      date: Math.floor(Date.now() / 1000),
    };
    const delivered = await emitManagementWebhook(state, {
      wabaId: found.waba.id,
      field: "message_template_quality_update",
      time: parsed.data.time,
      value: {
        previous_quality_score: previous,
        new_quality_score: parsed.data.score,
        ...templateEventValue(found.template),
      },
    });
    return Response.json({ template: found.template, delivered });
  });
  app.post("/templates/:ref/components", async (c) => {
    const parsed = await parse(c.req.raw, ComponentsInput);
    if ("error" in parsed) return parsed.error;
    const found = templateRef(state, c.req.param("ref"), parsed.data);
    if (!found) return badRequest("Unknown template");
    found.template.components = parsed.data.components;
    const bodyText = parsed.data.components.find((x) => x.type === "BODY")
      ?.text;
    const delivered = await emitManagementWebhook(state, {
      wabaId: found.waba.id,
      field: "message_template_components_update",
      time: parsed.data.time,
      value: {
        ...templateEventValue(found.template),
        ...(typeof bodyText === "string"
          ? { message_template_element: bodyText }
          : {}),
      },
    });
    return Response.json({ template: found.template, delivered });
  });
  app.post("/templates/:ref/category", async (c) => {
    const parsed = await parse(c.req.raw, CategoryInput);
    if ("error" in parsed) return parsed.error;
    const found = templateRef(state, c.req.param("ref"), parsed.data);
    if (!found) return badRequest("Unknown template");
    const previous = found.template.category;
    found.template.previous_category = previous;
    found.template.category = parsed.data.category;
    const delivered = await emitManagementWebhook(state, {
      wabaId: found.waba.id,
      field: "template_category_update",
      time: parsed.data.time,
      value: {
        ...templateEventValue(found.template),
        previous_category: previous,
        new_category: parsed.data.category,
      },
    });
    return Response.json({ template: found.template, delivered });
  });
  return app;
}

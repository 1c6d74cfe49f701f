import { Hono } from "hono";
import { z } from "zod";
import { handleInbound, InboundSchema } from "./inbound.ts";
import { storeMedia } from "./media.ts";
import {
  type Behaviour,
  DEFAULT_WABA_ID,
  digitsOf,
  resetSimulator,
  type SimulatorState,
} from "./state.ts";
import { healthOf } from "./waba_state.ts";

const rate = z.number().min(0).max(1);
const delay = z.number().int().min(0);

const BehaviourPatch = z.strictObject({
  delaysMs: z.strictObject({
    sent: delay.optional(),
    delivered: delay.optional(),
    read: delay.optional(),
  }).optional(),
  duplicateRate: rate.optional(),
  reorderRate: rate.optional(),
  failNext: z.array(z.strictObject({
    code: z.number().int().nonnegative(),
    mode: z.enum(["sync", "async"]),
    count: z.number().int().min(1).optional(),
    to: z.string().optional(),
  })).optional(),
  throughputPerSecond: z.number().positive().optional(),
  stopAfter: z.enum(["sent", "delivered", "read"]).optional(),
  unknownTemplates: z.array(z.string()).optional(),
  latencyMs: delay.optional(),
});

const NumberInput = z.strictObject({
  phoneNumberId: z.string().min(1),
  displayPhoneNumber: z.string().regex(/^\+?[0-9 ()-]{5,25}$/),
  wabaId: z.string().min(1).optional(),
  /** The number's display name at Meta (GET /{phone-number-id} verified_name). */
  verifiedName: z.string().min(1).optional(),
});

/** A media object made in the simulator (large test files never travel as JSON). */
const MediaInput = z.strictObject({
  sizeBytes: z.number().int().min(0).max(512 * 1024 * 1024),
  mimeType: z.string().min(1).default("application/octet-stream"),
});

const CallbackInput = z.strictObject({ url: z.url({ protocol: /^https?$/ }) });

export function badRequest(message: string): Response {
  return Response.json({ error: { message } }, { status: 400 });
}

/** The request body read with `schema` (an empty one as `{}`), or the 400 answer. */
export async function parse<T>(
  req: Request,
  schema: z.ZodType<T>,
): Promise<{ data: T } | { error: Response }> {
  let raw: unknown;
  try {
    const text = await req.text();
    raw = text === "" ? {} : JSON.parse(text);
  } catch {
    return { error: badRequest("Request body must be JSON") };
  }
  const result = schema.safeParse(raw);
  if (!result.success) {
    return { error: badRequest(z.prettifyError(result.error)) };
  }
  return { data: result.data };
}

/** Applies a partial behaviour update: top-level keys replace, delaysMs merges. */
export function applyBehaviour(
  state: SimulatorState,
  patch: z.infer<typeof BehaviourPatch>,
): Behaviour {
  const b = state.behaviour;
  const { delaysMs, failNext, ...rest } = patch;
  Object.assign(b, rest);
  if (delaysMs) b.delaysMs = { ...b.delaysMs, ...delaysMs };
  if (failNext) {
    b.failNext = failNext.map((r) => ({ ...r, count: r.count ?? 1 }));
  }
  return b;
}

function duplicatesOf(state: SimulatorState): number {
  let duplicates = 0;
  for (const n of state.countsByOpaque.values()) duplicates += n - 1;
  return duplicates;
}

/** The /_sim control API: behaviour, records, number registry, inbound injection. */
export function controlRoutes(state: SimulatorState): Hono {
  const app = new Hono();
  app.get("/behaviour", () => Response.json(state.behaviour));
  app.post("/behaviour", async (c) => {
    const parsed = await parse(c.req.raw, BehaviourPatch);
    if ("error" in parsed) return parsed.error;
    return Response.json(applyBehaviour(state, parsed.data));
  });
  app.post("/reset", () => {
    resetSimulator(state);
    return Response.json({ ok: true });
  });
  app.get("/messages", (c) => {
    const offset = c.req.query("offset");
    const limit = c.req.query("limit");
    if (offset === undefined && limit === undefined) {
      return Response.json({
        messages: state.sends,
        countsByOpaque: Object.fromEntries(state.countsByOpaque),
        duplicates: duplicatesOf(state),
      });
    }
    // Paged (for big runs): sends are append-only until reset, so an offset is a stable cursor.
    const from = Number(offset ?? 0);
    const size = Number(limit ?? 1000);
    if (!Number.isInteger(from) || from < 0) {
      return badRequest("offset must be a whole number >= 0");
    }
    if (!Number.isInteger(size) || size < 1 || size > 10_000) {
      return badRequest("limit must be a whole number from 1 to 10000");
    }
    const messages = state.sends.slice(from, from + size);
    return Response.json({
      messages,
      total: state.sends.length,
      nextOffset: from + messages.length,
      duplicates: duplicatesOf(state),
    });
  });
  app.get("/stats", () =>
    Response.json({
      sends: state.sends.length,
      duplicates: duplicatesOf(state),
      throttledByNumber: Object.fromEntries(state.throttled),
    }));
  app.get("/reads", () => Response.json({ reads: state.reads }));
  app.get("/callbacks", () => Response.json({ callbacks: state.callbacks }));
  app.get(
    "/numbers",
    () => Response.json({ numbers: [...state.numbers.values()] }),
  );
  app.post("/numbers", async (c) => {
    const parsed = await parse(c.req.raw, NumberInput);
    if ("error" in parsed) return parsed.error;
    const n = {
      phoneNumberId: parsed.data.phoneNumberId,
      displayPhoneNumber: digitsOf(parsed.data.displayPhoneNumber),
      wabaId: parsed.data.wabaId ?? DEFAULT_WABA_ID,
    };
    state.numbers.set(n.phoneNumberId, n);
    if (parsed.data.verifiedName) {
      healthOf(state, n.phoneNumberId).verified_name = parsed.data.verifiedName;
    }
    return Response.json(n);
  });
  app.post("/media", async (c) => {
    const parsed = await parse(c.req.raw, MediaInput);
    if ("error" in parsed) return parsed.error;
    const bytes = new Uint8Array(parsed.data.sizeBytes);
    // A cheap pattern that still changes every byte's neighbours: hashes tell files apart.
    for (let i = 0; i < bytes.length; i++) {
      bytes[i] = (i * 131 + (i >> 16)) & 255;
    }
    const media = await storeMedia(state, bytes, parsed.data.mimeType);
    return Response.json({ id: media.id, sha256: media.sha256 });
  });
  app.get("/callback-url", () => Response.json({ url: state.callbackUrl }));
  app.post("/callback-url", async (c) => {
    const parsed = await parse(c.req.raw, CallbackInput);
    if ("error" in parsed) return parsed.error;
    state.callbackUrl = parsed.data.url;
    return Response.json({ url: state.callbackUrl });
  });
  app.post("/inbound", async (c) => {
    const parsed = await parse(c.req.raw, InboundSchema);
    if ("error" in parsed) return parsed.error;
    return handleInbound(state, parsed.data);
  });
  return app;
}

import { scheduleStatuses } from "./callbacks.ts";
import { graphErrorResponse } from "./sim_errors.ts";
import { validateSend } from "./send_validation.ts";
import { managementState } from "./waba_state.ts";
import {
  digitsOf,
  type FailRule,
  isUserId,
  newWamid,
  type SentRecord,
  type SimulatorState,
  sleep,
} from "./state.ts";

type Obj = Record<string, unknown>;

/** Answers 401 code 190 unless the request carries a non-empty bearer token. */
export function requireBearer(req: Request): Response | null {
  const header = req.headers.get("authorization") ?? "";
  return /^Bearer\s+\S+/i.test(header) ? null : graphErrorResponse(190);
}

/** POST /{phone-number-id}/messages: sends, read receipts and typing indicators. */
export async function handleMessages(
  state: SimulatorState,
  req: Request,
  phoneNumberId: string,
): Promise<Response> {
  if (state.behaviour.latencyMs > 0) {
    try {
      await sleep(state.behaviour.latencyMs, state.epoch.signal);
    } catch {
      return graphErrorResponse(2);
    }
  }
  const unauthorized = requireBearer(req);
  if (unauthorized) return unauthorized;
  let body: unknown;
  try {
    body = await req.json();
  } catch {
    return graphErrorResponse(100, { details: "Request body is not JSON" });
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return graphErrorResponse(100, {
      details: "Request body is not an object",
    });
  }
  const msg = body as Obj;
  if (msg.messaging_product !== "whatsapp") {
    return graphErrorResponse(100, {
      details: "The parameter messaging_product is required.",
    });
  }
  if (msg.status !== undefined) return markRead(state, msg, phoneNumberId);
  const rejection = validateSend(msg);
  if (rejection) {
    return graphErrorResponse(rejection.code, { details: rejection.details });
  }
  if (!takeToken(state, phoneNumberId, Date.now())) {
    const refused = state.throttled.get(phoneNumberId) ?? 0;
    state.throttled.set(phoneNumberId, refused + 1);
    return graphErrorResponse(130429, { subcode: 2494055 });
  }
  const to = recipientOf(msg);
  const template = msg.template as Obj | undefined;
  if (
    msg.type === "template" &&
    state.behaviour.unknownTemplates.includes(template!.name as string)
  ) {
    const language = (template!.language as Obj).code as string;
    return graphErrorResponse(132001, {
      details: `template name (${
        template!.name
      }) does not exist in ${language}`,
    });
  }
  if (msg.type === "template") {
    const refused = templateRefusal(state, phoneNumberId, template!);
    if (refused) return refused;
  }
  const rule = takeFailRule(state, to);
  if (rule?.mode === "sync") return graphErrorResponse(rule.code);
  return accept(state, msg, phoneNumberId, rule?.code ?? null);
}

/**
 * A send of a template the number's WABA has paused (132015) or disabled
 * (132016), as Meta refuses it; a WABA the simulator does not manage (or a
 * template it does not know) lets every template through.
 */
function templateRefusal(
  state: SimulatorState,
  phoneNumberId: string,
  template: Obj,
): Response | null {
  const wabaId = state.numbers.get(phoneNumberId)?.wabaId;
  const waba = wabaId ? managementState(state).wabas.get(wabaId) : undefined;
  const language = (template.language as Obj | undefined)?.code;
  const known = waba?.templates.find((t) =>
    t.name === template.name && t.language === language
  );
  if (known?.status === "PAUSED") return graphErrorResponse(132015);
  if (known?.status === "DISABLED") return graphErrorResponse(132016);
  return null;
}

/** The phone number of a send, else its BSUID `recipient` (validated before). */
function recipientOf(msg: Obj): string {
  return (msg.to ?? msg.recipient) as string;
}

function accept(
  state: SimulatorState,
  msg: Obj,
  phoneNumberId: string,
  asyncFailCode: number | null,
): Response {
  const to = recipientOf(msg);
  const opaque = typeof msg.biz_opaque_callback_data === "string"
    ? msg.biz_opaque_callback_data
    : null;
  const sent: SentRecord = {
    wamid: newWamid(),
    phoneNumberId,
    to,
    type: msg.type as string,
    body: msg,
    bizOpaque: opaque,
    at: new Date().toISOString(),
  };
  state.sends.push(sent);
  if (opaque !== null) {
    state.countsByOpaque.set(
      opaque,
      (state.countsByOpaque.get(opaque) ?? 0) + 1,
    );
  }
  scheduleStatuses(state, sent, asyncFailCode);
  return Response.json({
    messaging_product: "whatsapp",
    contacts: [
      isUserId(to)
        ? { input: to, user_id: to }
        : { input: to, wa_id: digitsOf(to) },
    ],
    messages: [{
      id: sent.wamid,
      ...(sent.type === "template" ? { message_status: "accepted" } : {}),
    }],
  });
}

function markRead(
  state: SimulatorState,
  msg: Obj,
  phoneNumberId: string,
): Response {
  if (msg.status !== "read") {
    return graphErrorResponse(100, { details: "Param status must be read" });
  }
  if (typeof msg.message_id !== "string" || msg.message_id === "") {
    return graphErrorResponse(131008, {
      details: "The parameter message_id is required.",
    });
  }
  const typing = msg.typing_indicator;
  if (
    typing !== undefined &&
    (typeof typing !== "object" || typing === null ||
      (typing as Obj).type !== "text")
  ) {
    return graphErrorResponse(100, {
      details: "Param typing_indicator['type'] must be text",
    });
  }
  // A read or typing call names no recipient: only a sync rule without `to` applies.
  const rule = takeFailRule(state, null);
  if (rule) return graphErrorResponse(rule.code);
  state.reads.push({
    phoneNumberId,
    messageId: msg.message_id,
    typing: typing !== undefined,
    at: new Date().toISOString(),
  });
  return Response.json({ success: true });
}

/** Token bucket per business number, refilled continuously at the configured rate. */
function takeToken(
  state: SimulatorState,
  phoneNumberId: string,
  now: number,
): boolean {
  const rate = state.behaviour.throughputPerSecond;
  const bucket = state.buckets.get(phoneNumberId) ?? { tokens: rate, at: now };
  bucket.tokens = Math.min(
    rate,
    bucket.tokens + (now - bucket.at) * rate / 1000,
  );
  bucket.at = now;
  state.buckets.set(phoneNumberId, bucket);
  if (bucket.tokens < 1) return false;
  bucket.tokens -= 1;
  return true;
}

/** The next matching rule for a send to `to`, or for a read/typing call (`to` null: sync rules without `to`). */
function takeFailRule(
  state: SimulatorState,
  to: string | null,
): FailRule | undefined {
  const rules = state.behaviour.failNext;
  const index = rules.findIndex((r) =>
    to === null
      ? r.mode === "sync" && r.to === undefined
      : r.to === undefined || digitsOf(r.to) === digitsOf(to)
  );
  if (index < 0) return undefined;
  const rule = rules[index]!;
  rule.count -= 1;
  if (rule.count <= 0) rules.splice(index, 1);
  return rule;
}

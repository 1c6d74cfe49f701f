import { CallDeadline } from "../upstream/call_deadline.ts";
import { escapeUnicode, signMetaBody } from "../upstream/meta_signature.ts";
import { asyncErrorObject } from "./sim_errors.ts";
import {
  DEFAULT_WABA_ID,
  digitsOf,
  isUserId,
  recordCallback,
  type SentRecord,
  type SimulatorState,
  sleep,
  type StatusName,
  track,
  unixSeconds,
} from "./state.ts";

/** A callback POST gives up after this long; the next attempt follows the retry schedule. */
const CALLBACK_TIMEOUT_MS = 10_000;

export interface DeliveryInfo {
  kind: "status" | "inbound" | "management";
  wamid: string;
  status?: string;
  duplicate?: boolean;
}

export interface DeliveryResult {
  ok: boolean;
  httpStatus: number | null;
  error: string | null;
}

/** The §4.3 envelope around one change value for a business number. */
export function webhookEnvelope(
  state: SimulatorState,
  phoneNumberId: string,
  value: Record<string, unknown>,
  field = "messages",
): Record<string, unknown> {
  const number = state.numbers.get(phoneNumberId);
  return {
    object: "whatsapp_business_account",
    entry: [{
      id: number?.wabaId ?? DEFAULT_WABA_ID,
      changes: [{
        field,
        value: {
          messaging_product: "whatsapp",
          metadata: {
            display_phone_number: number?.displayPhoneNumber ??
              digitsOf(phoneNumberId),
            phone_number_id: phoneNumberId,
          },
          ...value,
        },
      }],
    }],
  };
}

/** JSON text sent as written (integers past 2^53, which a JS number cannot hold). */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * POSTs a payload to the callback URL as Meta does: escaped-unicode JSON signed
 * with X-Hub-Signature-256. With `retry`, failed attempts follow state.retryDelaysMs.
 */
export async function deliverSigned(
  state: SimulatorState,
  payload: unknown,
  info: DeliveryInfo,
  opts: { retry: boolean; signal: AbortSignal },
): Promise<DeliveryResult> {
  const raw = escapeUnicode(
    payload instanceof RawJson ? payload.text : JSON.stringify(payload),
  );
  const signature = signMetaBody(state.appSecret, raw);
  const waits = opts.retry ? [0, ...state.retryDelaysMs] : [0];
  let result: DeliveryResult = {
    ok: false,
    httpStatus: null,
    error: "Not attempted",
  };
  for (const [i, wait] of waits.entries()) {
    try {
      await sleep(wait, opts.signal);
    } catch {
      return { ok: false, httpStatus: null, error: "Simulator was reset" };
    }
    result = await attemptOnce(state, raw, signature, info, i + 1, opts.signal);
    // Without a URL there is nobody to retry for.
    if (result.ok || opts.signal.aborted || !state.callbackUrl) return result;
  }
  logGaveUp(state, info, result);
  return result;
}

/** One signed POST to the callback URL (read on every attempt: the receiver may have moved), recorded. */
async function attemptOnce(
  state: SimulatorState,
  raw: string,
  signature: string,
  info: DeliveryInfo,
  attempt: number,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  const url = state.callbackUrl;
  const result = url
    ? await postOnce(url, raw, signature, signal)
    : { ok: false, httpStatus: null, error: "No callback URL configured" };
  recordCallback(state, {
    kind: info.kind,
    wamid: info.wamid,
    status: info.status ?? null,
    attempt,
    duplicate: info.duplicate ?? false,
    url,
    httpStatus: result.httpStatus,
    error: result.error,
    at: new Date().toISOString(),
  });
  if (!result.ok) {
    state.log.debug("Callback attempt failed", {
      wamid: info.wamid,
      status: info.status,
      attempt,
      httpStatus: result.httpStatus,
      error: result.error,
    });
  }
  return result;
}

function logGaveUp(
  state: SimulatorState,
  info: DeliveryInfo,
  result: DeliveryResult,
): void {
  state.log.warn("Callback delivery failed", {
    wamid: info.wamid,
    status: info.status,
    httpStatus: result.httpStatus,
    error: result.error,
  });
}

async function postOnce(
  url: string,
  raw: string,
  signature: string,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  // A timeout cleared once the answer is read (see CallDeadline).
  const deadline = new CallDeadline(CALLBACK_TIMEOUT_MS, signal);
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "User-Agent": "facebookexternalua",
        "X-Hub-Signature-256": signature,
      },
      body: raw,
      signal: deadline.signal,
    });
    const text = await res.text();
    return res.ok ? { ok: true, httpStatus: res.status, error: null } : {
      ok: false,
      httpStatus: res.status,
      error: text.slice(0, 500) || `HTTP ${res.status}`,
    };
  } catch (err) {
    return { ok: false, httpStatus: null, error: (err as Error).message };
  } finally {
    deadline.end();
  }
}

interface Step {
  status: StatusName | "failed";
  /** When the event happened (offset from the send); the timestamp it carries. */
  eventAt: number;
  /** When the callback is posted (offset from the send); differs when reordered. */
  postAt: number;
}

function plannedSteps(state: SimulatorState, failCode: number | null): Step[] {
  const b = state.behaviour;
  if (failCode !== null) {
    return [{
      status: "failed",
      eventAt: b.delaysMs.sent,
      postAt: b.delaysMs.sent,
    }];
  }
  const order: StatusName[] = ["sent", "delivered", "read"];
  const steps = order.slice(0, order.indexOf(b.stopAfter) + 1).map((s) => ({
    status: s,
    eventAt: b.delaysMs[s],
    postAt: b.delaysMs[s],
  }));
  if (steps.length === 3 && state.random() < b.reorderRate) {
    const [sent, delivered, read] = steps as [Step, Step, Step];
    return [sent, { ...read, postAt: delivered.postAt }, {
      ...delivered,
      postAt: read.postAt,
    }];
  }
  return steps;
}

function statusObject(
  sent: SentRecord,
  step: Step,
  startedAt: number,
  failCode: number | null,
): Record<string, unknown> {
  const status: Record<string, unknown> = {
    id: sent.wamid,
    status: step.status,
    timestamp: unixSeconds(startedAt + step.eventAt),
    // A username user is addressed by BSUID only: no phone in the report (§4.7).
    ...(isUserId(sent.to)
      ? { recipient_user_id: sent.to }
      : { recipient_id: digitsOf(sent.to) }),
  };
  if (sent.bizOpaque !== null) {
    status.biz_opaque_callback_data = sent.bizOpaque;
  }
  if (failCode !== null) {
    status.errors = [asyncErrorObject(failCode)];
  } else if (step.status === "sent" || step.status === "delivered") {
    const template = sent.type === "template";
    status.conversation = {
      id: sent.wamid.slice(6, 38),
      ...(step.status === "sent"
        ? { expiration_timestamp: unixSeconds(startedAt + 86_400_000) }
        : {}),
      origin: { type: template ? "utility" : "service" },
    };
    status.pricing = {
      billable: template,
      pricing_model: "PMP",
      type: template ? "regular" : "free_customer_service",
      category: template ? "utility" : "service",
    };
  }
  return status;
}

/**
 * Emits the status callbacks of one accepted send in the background: sent,
 * delivered, read (or one failed), each after the previous one was answered,
 * so they arrive in order unless reordering was asked for. In queued mode
 * they wait for flushCallbacks() instead of timers.
 */
export function scheduleStatuses(
  state: SimulatorState,
  sent: SentRecord,
  failCode: number | null,
): void {
  const signal = state.epoch.signal;
  const startedAt = Date.now();
  const steps = plannedSteps(state, failCode);
  const duplicateRate = state.behaviour.duplicateRate;
  const payloadOf = (step: Step) =>
    webhookEnvelope(state, sent.phoneNumberId, {
      statuses: [statusObject(sent, step, startedAt, failCode)],
    });
  const infoOf = (step: Step) => ({
    kind: "status" as const,
    wamid: sent.wamid,
    status: step.status,
  });
  if (state.callbackMode === "queued") {
    const queueStep = (i: number) => {
      const step = steps[i];
      if (!step) return;
      const payload = payloadOf(step);
      const info = infoOf(step);
      queueDelivery(
        state,
        startedAt + step.postAt,
        payload,
        info,
        signal,
        () =>
          !signal.aborted && state.random() < duplicateRate
            ? queueDelivery(
              state,
              startedAt + step.postAt,
              payload,
              { ...info, duplicate: true },
              signal,
              () => queueStep(i + 1),
            )
            : queueStep(i + 1),
      );
    };
    queueStep(0);
    return;
  }
  track(
    state,
    (async () => {
      for (const step of steps) {
        try {
          await sleep(startedAt + step.postAt - Date.now(), signal);
        } catch {
          return;
        }
        const payload = payloadOf(step);
        const info = infoOf(step);
        await deliverSigned(state, payload, info, { retry: true, signal });
        if (!signal.aborted && state.random() < duplicateRate) {
          await deliverSigned(state, payload, { ...info, duplicate: true }, {
            retry: true,
            signal,
          });
        }
      }
    })(),
  );
}

/**
 * Queues one callback POST for flushCallbacks(); a failed attempt queues the
 * next one (state.retryDelaysMs later in due order), and `then` runs once it
 * was accepted or given up, as the timer mode moves on to the next status.
 */
function queueDelivery(
  state: SimulatorState,
  dueAt: number,
  payload: unknown,
  info: DeliveryInfo,
  signal: AbortSignal,
  then: () => void,
  attempt = 1,
): void {
  state.queued.push({
    dueAt,
    seq: state.nextQueuedSeq++,
    run: async () => {
      if (signal.aborted) return;
      const raw = escapeUnicode(JSON.stringify(payload));
      const signature = signMetaBody(state.appSecret, raw);
      const result = await attemptOnce(
        state,
        raw,
        signature,
        info,
        attempt,
        signal,
      );
      if (signal.aborted) return;
      const wait = state.retryDelaysMs[attempt - 1];
      if (!result.ok && state.callbackUrl && wait !== undefined) {
        const next = Date.now() + wait;
        queueDelivery(state, next, payload, info, signal, then, attempt + 1);
        return;
      }
      if (!result.ok) logGaveUp(state, info, result);
      then();
    },
  });
}

/**
 * Posts every queued callback one at a time, earliest due first, including
 * the retries and next statuses queued meanwhile; returns how many attempts
 * it made (0 in timer mode, where nothing is queued).
 */
export async function flushCallbacks(state: SimulatorState): Promise<number> {
  let attempts = 0;
  while (state.queued.length > 0) {
    let first = 0;
    for (const [i, entry] of state.queued.entries()) {
      const best = state.queued[first]!;
      if (
        entry.dueAt < best.dueAt ||
        (entry.dueAt === best.dueAt && entry.seq < best.seq)
      ) first = i;
    }
    const [entry] = state.queued.splice(first, 1);
    await entry!.run();
    attempts++;
  }
  return attempts;
}

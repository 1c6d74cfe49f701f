import { type Context, Hono } from "hono";
import type { Container } from "../../container.ts";
import { AppError } from "../../errors.ts";
import { MetaSignatureCheck } from "../../upstream/meta_signature.ts";
import type { AppEnv } from "../env.ts";
import {
  type GateTicket,
  MAX_WEBHOOK_BYTES,
  senderKey,
  WebhookGate,
} from "../webhook_gate.ts";

/** The inbound domain (and zod, which parses Meta's payloads), imported on the first callback. */
const inbound = () => import("../../domain/inbound/inbound_service.ts");

/** Upstream callbacks: the verification handshake and signed event deliveries. */
export function metaWebhookRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const gate = new WebhookGate(container.clock);
  const intake = container.parts.once("Meta webhook intake", inbound);
  app.get("/meta/webhook", async (c) => {
    const { verifyHandshake } = await intake();
    const challenge = verifyHandshake(container, {
      mode: c.req.query("hub.mode"),
      token: c.req.query("hub.verify_token"),
      challenge: c.req.query("hub.challenge"),
    });
    return c.text(challenge, 200);
  });
  app.post("/meta/webhook", async (c) => {
    const check = new MetaSignatureCheck(
      container.config.metaAppSecret,
      c.req.header("x-hub-signature-256") ?? null,
    );
    let ticket: GateTicket;
    try {
      ticket = admit(container, gate, c, check);
    } catch (err) {
      // Refused unread: drop the body rather than have the server drain it.
      await c.req.raw.body?.cancel().catch(() => {});
      throw err;
    }
    let raw: Uint8Array;
    try {
      raw = await readCapped(c.req.raw.body, check, {
        maxBytes: MAX_WEBHOOK_BYTES,
        timeoutMs: container.config.metaWebhookReadTimeoutMs,
      });
    } catch (err) {
      ticket.done(true);
      throw err;
    }
    const verified = check.matches();
    ticket.done(!verified);
    if (!verified) throw badSignature();
    await (await intake()).acceptMetaWebhook(container, raw);
    return c.text("EVENT_RECEIVED", 200);
  });
  return app;
}

/** The checks made before a byte of the body is read; the gate's ticket when they pass. */
function admit(
  container: Container,
  gate: WebhookGate,
  c: Context<AppEnv>,
  check: MetaSignatureCheck,
): GateTicket {
  if (!container.config.metaAppSecret) {
    container.log.error(
      "META_APP_SECRET is not set: refusing upstream webhooks",
    );
    throw new AppError("UNAUTHORIZED", "Webhook signature cannot be verified");
  }
  if (!check.plausible) throw badSignature();
  const length = Number(c.req.header("content-length") ?? "0");
  if (length > MAX_WEBHOOK_BYTES) throw tooLarge();
  const info = c.env as { remoteAddr?: { hostname?: string } } | undefined;
  return gate.enter(senderKey(info?.remoteAddr?.hostname));
}

function badSignature(): AppError {
  return new AppError("UNAUTHORIZED", "Invalid X-Hub-Signature-256 signature");
}

function tooLarge(): AppError {
  return new AppError(
    "PAYLOAD_TOO_LARGE",
    `Webhook body is larger than ${MAX_WEBHOOK_BYTES} bytes`,
  );
}

/**
 * Reads a body into memory, feeding each chunk to the signature check as it
 * arrives (the only pass over the bytes), and gives up as soon as it passes
 * `maxBytes` (chunked bodies have no length) or has not arrived whole within
 * `timeoutMs`: a body trickled byte by byte would hold its read slot forever.
 */
async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  check: MetaSignatureCheck,
  limits: { maxBytes: number; timeoutMs: number },
): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  const reader = body.getReader();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    // Settles the pending read as done.
    reader.cancel().catch(() => {});
  }, limits.timeoutMs);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (timedOut) throw tooSlow(limits.timeoutMs);
      if (done) break;
      if (check.bytes + value.length > limits.maxBytes) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      check.update(value);
      chunks.push(value);
    }
  } finally {
    clearTimeout(timer);
  }
  const out = new Uint8Array(check.bytes);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

function tooSlow(timeoutMs: number): AppError {
  return new AppError(
    "VALIDATION_ERROR",
    `Cannot read webhook body: it did not arrive within ${timeoutMs} ms`,
  );
}

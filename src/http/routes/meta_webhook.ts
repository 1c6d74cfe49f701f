import { type Context, Hono } from "hono";
import type { Container } from "../../container.ts";
import { AppError } from "../../errors.ts";
import { MetaSignatureCheck } from "../../upstream/meta_signature.ts";
import type { AppEnv } from "../env.ts";
import {
  type GateTicket,
  MAX_WEBHOOK_BYTES,
  type WebhookGate,
} from "../webhook_gate.ts";

/** The inbound domain (and zod, which parses Meta's payloads), imported on the first callback. */
const inbound = () => import("../../domain/inbound/inbound_service.ts");

/** Upstream callbacks: the verification handshake and signed event deliveries. */
export function metaWebhookRoutes(
  container: Container,
  gate: WebhookGate,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const intake = container.parts.once("Meta webhook intake", inbound);
  let secretMissingLogged = false;
  app.get("/meta/webhook", async (c) => {
    const { verifyHandshake, recordHandshake } = await intake();
    const challenge = verifyHandshake(container, {
      mode: c.req.query("hub.mode"),
      token: c.req.query("hub.verify_token"),
      challenge: c.req.query("hub.challenge"),
    });
    await recordHandshake(container);
    return c.text(challenge, 200);
  });
  app.post("/meta/webhook", async (c) => {
    const check = new MetaSignatureCheck(
      container.config.metaAppSecret,
      c.req.header("x-hub-signature-256") ?? null,
    );
    let ticket: GateTicket;
    try {
      if (!container.config.metaAppSecret && !secretMissingLogged) {
        // serve refuses to start without it; an embedding program says so once.
        secretMissingLogged = true;
        container.log.error(
          "META_APP_SECRET is not set: refusing upstream webhooks",
        );
      }
      ticket = await gate.enter(
        admission(c, check, !!container.config.metaAppSecret),
      );
    } catch (err) {
      // Refused unread: drop the body rather than have the server drain it.
      await c.req.raw.body?.cancel().catch(() => {});
      throw err;
    }
    let raw: Uint8Array;
    try {
      raw = await readBody(c.req.raw.body, check, ticket);
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

/** The checks made before a byte of the body is read; what the gate is asked for when they pass. */
function admission(
  c: Context<AppEnv>,
  check: MetaSignatureCheck,
  secretSet: boolean,
) {
  if (!secretSet) {
    throw new AppError("UNAUTHORIZED", "Webhook signature cannot be verified");
  }
  if (!check.plausible) throw badSignature();
  const header = c.req.header("content-length");
  const length = header === undefined ? undefined : Number(header);
  if (length !== undefined && length > MAX_WEBHOOK_BYTES) throw tooLarge();
  const client = c.var.client;
  return {
    address: client.address,
    distinct: client.distinct,
    // A chunked body may grow to the cap: reserve all of it.
    bytes: length !== undefined && Number.isSafeInteger(length) && length >= 0
      ? length
      : MAX_WEBHOOK_BYTES,
  };
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
 * 3 MB (chunked bodies have no length) or the gate drops it (too slow, too
 * long, or evicted for a waiting post): its signal cancels the pending read.
 */
async function readBody(
  body: ReadableStream<Uint8Array> | null,
  check: MetaSignatureCheck,
  ticket: GateTicket,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  const reader = body.getReader();
  const stop = () => {
    // Settles the pending read as done.
    reader.cancel().catch(() => {});
  };
  ticket.signal.addEventListener("abort", stop, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (ticket.signal.aborted) throw ticket.signal.reason;
      if (done) break;
      if (check.bytes + value.length > MAX_WEBHOOK_BYTES) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      check.update(value);
      ticket.received(value.length);
      chunks.push(value);
    }
  } finally {
    ticket.signal.removeEventListener("abort", stop);
  }
  const out = new Uint8Array(check.bytes);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

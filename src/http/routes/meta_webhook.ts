import { Hono } from "hono";
import type { Container } from "../../container.ts";
import {
  acceptMetaWebhook,
  verifyHandshake,
} from "../../domain/inbound/inbound_service.ts";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../env.ts";

/** Meta's payloads are at most 3 MB; leave room for batching. */
const MAX_WEBHOOK_BYTES = 8 * 1024 * 1024;

/** Upstream callbacks: the verification handshake and signed event deliveries. */
export function metaWebhookRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/meta/webhook", (c) => {
    const challenge = verifyHandshake(container, {
      mode: c.req.query("hub.mode"),
      token: c.req.query("hub.verify_token"),
      challenge: c.req.query("hub.challenge"),
    });
    return c.text(challenge, 200);
  });
  app.post("/meta/webhook", async (c) => {
    const length = Number(c.req.header("content-length") ?? "0");
    if (length > MAX_WEBHOOK_BYTES) {
      throw new AppError("PAYLOAD_TOO_LARGE", "Webhook body is too large");
    }
    const raw = await readCapped(c.req.raw.body, MAX_WEBHOOK_BYTES);
    await acceptMetaWebhook(
      container,
      raw,
      c.req.header("x-hub-signature-256") ?? null,
    );
    return c.text("EVENT_RECEIVED", 200);
  });
  return app;
}

/** Reads a body, giving up as soon as it passes `max` bytes (chunked bodies have no length). */
async function readCapped(
  body: ReadableStream<Uint8Array> | null,
  max: number,
): Promise<Uint8Array> {
  if (!body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel().catch(() => {});
      throw new AppError("PAYLOAD_TOO_LARGE", "Webhook body is too large");
    }
    chunks.push(value);
  }
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

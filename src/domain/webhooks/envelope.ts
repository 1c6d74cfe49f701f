/**
 * What a webhook delivery sends: the envelope text, its signature, and the
 * synthetic data of a test delivery. Pure functions: the same inputs give the
 * same bytes, which the signature test vector and replays rely on.
 */
import type { Hash } from "node:crypto";
import { nodeCrypto, randomBase62 } from "../../crypto.ts";
import { idTime } from "../../ids.ts";

const encoder = new TextEncoder();

/** Receivers should refuse signatures older than this (seconds). */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface EnvelopeParts {
  event: string;
  eventId: string;
  webhookId: string;
  deliveredAt: string;
  attempt: number;
  /** The event's `data`, already JSON text (stored as such; never re-encoded). */
  dataText: string;
}

/**
 * The envelope `{ event, eventId, webhookId, deliveredAt, attempt, data }` in
 * that key order; equal to JSON.stringify of the object.
 */
export function envelopeText(p: EnvelopeParts): string {
  return `{"event":${JSON.stringify(p.event)},"eventId":${
    JSON.stringify(p.eventId)
  },"webhookId":${JSON.stringify(p.webhookId)},"deliveredAt":${
    JSON.stringify(p.deliveredAt)
  },"attempt":${p.attempt},"data":${p.dataText}}`;
}

/** A new subscription secret: `whsec_` and 40 random base62 characters. */
export function newWebhookSecret(): string {
  return `whsec_${randomBase62(40)}`;
}

/** SHA-256's block: HMAC pads its key to this (RFC 2104). */
const BLOCK_BYTES = 64;
/** Keyed hash states kept (one per subscription secret in use). */
const MAX_KEYED = 1_000;
const keyedStates = new Map<string, { inner: Hash; outer: Hash }>();

/**
 * The SHA-256 states of HMAC(secret) after its padded key blocks, made once
 * per secret: under Deno, createHmac() cost about 40 us a call (most of it
 * setting up the key), copying two keyed states about half of that.
 */
function keyedState(secret: string): { inner: Hash; outer: Hash } {
  let state = keyedStates.get(secret);
  if (state) return state;
  let key = encoder.encode(secret);
  if (key.length > BLOCK_BYTES) {
    key = new Uint8Array(
      nodeCrypto().createHash("sha256").update(key).digest(),
    );
  }
  const ipad = new Uint8Array(BLOCK_BYTES).fill(0x36);
  const opad = new Uint8Array(BLOCK_BYTES).fill(0x5c);
  key.forEach((b, i) => {
    ipad[i]! ^= b;
    opad[i]! ^= b;
  });
  state = {
    inner: nodeCrypto().createHash("sha256").update(ipad),
    outer: nodeCrypto().createHash("sha256").update(opad),
  };
  if (keyedStates.size >= MAX_KEYED) {
    keyedStates.delete(keyedStates.keys().next().value!);
  }
  keyedStates.set(secret, state);
  return state;
}

/** HMAC-SHA256 of `<timestamp>.<body>` keyed with `secret`, as hex (RFC 2104). */
function hmacHex(secret: string, timestamp: number, body: string): string {
  const { inner, outer } = keyedState(secret);
  const innerDigest = inner.copy().update(`${timestamp}.`).update(body)
    .digest();
  return outer.copy().update(innerDigest).digest("hex");
}

/**
 * `X-Service-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`
 * keyed with the whole secret string (the scheme Stripe's verifier checks).
 */
export function signatureHeader(
  secret: string,
  timestamp: number,
  body: string,
): string {
  return `t=${timestamp},v1=${hmacHex(secret, timestamp, body)}`;
}

/**
 * True when some `v1` of the header is the HMAC of `<t>.<body>` and `t` is
 * within the tolerance of `nowSeconds`: what a receiver checks.
 */
export function verifySignature(
  secret: string,
  header: string,
  body: string,
  options: { nowSeconds: number; toleranceSeconds?: number },
): boolean {
  const parts = header.split(",").map((p) => p.trim().split("="));
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t)) return false;
  const tolerance = options.toleranceSeconds ?? SIGNATURE_TOLERANCE_SECONDS;
  if (Math.abs(options.nowSeconds - t) > tolerance) return false;
  const expected = encoder.encode(hmacHex(secret, t, body));
  return parts.some(([k, v]) => {
    if (k !== "v1" || !v) return false;
    const given = encoder.encode(v);
    return given.length === expected.length &&
      nodeCrypto().timingSafeEqual(given, expected);
  });
}

/** SHA-256 hex of the event data text: the only trace of a payload the delivery log keeps. */
export function payloadHash(dataText: string): string {
  return nodeCrypto().createHash("sha256").update(dataText).digest("hex");
}

const ZERO_ID = "00000000-0000-7000-8000-000000000000";

/**
 * The synthetic `message.received` data of a test delivery: the shape of a
 * real one, dummy ids, and `test: true`. Built from its event id alone (a
 * UUIDv7, which carries its creation time), so a replay rebuilds the same bytes.
 */
export function testEventData(eventId: string): Record<string, unknown> {
  return {
    id: eventId,
    conversationId: ZERO_ID,
    contactId: ZERO_ID,
    phoneNumberId: ZERO_ID,
    direction: "inbound",
    type: "text",
    content: { body: "This is a test delivery" },
    status: "delivered",
    waMessageId: `wamid.TEST.${eventId}`,
    errorCode: null,
    errorMessage: null,
    origin: "inbound",
    sentByAi: false,
    campaignId: null,
    clientRef: null,
    mediaId: null,
    mediaKey: null,
    createdAt: idTime(eventId).toISOString(),
    contact: {
      id: ZERO_ID,
      name: "Test Contact",
      phoneNumber: "+15550000000",
      userId: null,
      username: null,
    },
    test: true,
  };
}

/** The data text of a test delivery's synthetic event. */
export function testDataText(eventId: string): string {
  return JSON.stringify(testEventData(eventId));
}

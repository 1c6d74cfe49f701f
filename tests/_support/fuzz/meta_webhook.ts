// Signed POST /meta/webhook deliveries: Cloud API envelopes (messages and
// statuses for the seeded channel and wamids) with mutated fields, and junk.
import fc from "fast-check";
import { signMetaBody } from "../../../src/upstream/meta_signature.ts";
import type { FuzzRequest } from "./requests.ts";
import {
  junkBody,
  mutatedText,
  type Mutation,
  mutationsArb,
  oddString,
} from "./mutate.ts";

export interface MetaTargets {
  appSecret: string;
  wabaId: string;
  /** The channel's upstream phone number id and display number. */
  phoneNumberId: string;
  displayPhoneNumber: string;
  /** Upstream message ids the server knows (for statuses and reactions). */
  wamids: string[];
}

export interface MetaPlan {
  kind: "meta";
  body: { json: unknown; mutations: Mutation[] } | { raw: string };
  signature: "valid" | "none" | "bad" | "uppercase";
}

const digits = fc.stringMatching(/^549[0-9]{10}$/);

function messageArb(t: MetaTargets): fc.Arbitrary<unknown> {
  const base = {
    from: fc.oneof(digits, oddString),
    id: fc.oneof(
      fc.uuid().map((u) => `wamid.fuzz-${u}`),
      fc.constantFrom(...t.wamids),
    ),
    timestamp: fc.oneof(
      fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }).map(String),
      fc.constantFrom("0", "-1", "9".repeat(20), "abc"),
    ),
  };
  const media = (type: string) =>
    fc.record({
      ...base,
      type: fc.constant(type),
      [type]: fc.record({
        id: fc.string({ minLength: 1, maxLength: 20 }),
        mime_type: fc.constantFrom(
          "image/jpeg",
          "audio/ogg; codecs=opus",
          "application/pdf",
          "",
        ),
        sha256: fc.stringMatching(/^[0-9a-f]{0,64}$/),
        caption: oddString,
        filename: oddString,
      }, { requiredKeys: ["id"] }),
    });
  return fc.oneof(
    fc.record({
      ...base,
      type: fc.constant("text"),
      text: fc.record({ body: oddString }),
    }),
    media("image"),
    media("document"),
    media("sticker"),
    fc.record({
      ...base,
      type: fc.constant("reaction"),
      reaction: fc.record({
        message_id: fc.constantFrom(...t.wamids),
        emoji: oddString,
      }),
    }),
    fc.record({
      ...base,
      type: fc.constant("location"),
      location: fc.record({ latitude: fc.double(), longitude: fc.double() }),
    }),
    fc.record({
      ...base,
      type: fc.constantFrom(
        "unsupported",
        "interactive",
        "button",
        "system",
        "contacts",
      ),
    }),
  );
}

function statusArb(t: MetaTargets): fc.Arbitrary<unknown> {
  return fc.record({
    id: fc.oneof(fc.constantFrom(...t.wamids), fc.string({ minLength: 1 })),
    status: fc.constantFrom(
      "sent",
      "delivered",
      "read",
      "failed",
      "deleted",
      "SENT",
      "",
    ),
    timestamp: fc.integer({ min: 1_600_000_000, max: 1_900_000_000 }).map(
      String,
    ),
    recipient_id: digits,
    biz_opaque_callback_data: oddString,
    errors: fc.array(fc.record({ code: fc.integer(), title: oddString }), {
      maxLength: 2,
    }),
  }, { requiredKeys: ["id", "status"] });
}

/** A Cloud API `messages` change for the channel (or another number). */
function envelopeArb(t: MetaTargets): fc.Arbitrary<unknown> {
  const value = fc.record({
    messaging_product: fc.constant("whatsapp"),
    metadata: fc.record({
      display_phone_number: fc.constant(t.displayPhoneNumber),
      phone_number_id: fc.oneof(
        { arbitrary: fc.constant(t.phoneNumberId), weight: 6 },
        fc.stringMatching(/^[0-9]{15}$/),
      ),
    }),
    contacts: fc.array(
      fc.record({ wa_id: digits, profile: fc.record({ name: oddString }) }),
      { maxLength: 2 },
    ),
    messages: fc.array(messageArb(t), { maxLength: 3 }),
    statuses: fc.array(statusArb(t), { maxLength: 3 }),
  }, { requiredKeys: ["metadata"] });
  return fc.record({
    object: fc.constant("whatsapp_business_account"),
    entry: fc.array(
      fc.record({
        id: fc.constant(t.wabaId),
        changes: fc.array(
          fc.record({
            field: fc.constantFrom("messages", "messages", "account_update"),
            value,
          }),
          { minLength: 1, maxLength: 2 },
        ),
      }),
      { minLength: 1, maxLength: 2 },
    ),
  });
}

export function metaPlanArbitrary(t: MetaTargets): fc.Arbitrary<MetaPlan> {
  return fc.record({
    kind: fc.constant("meta" as const),
    body: fc.oneof(
      {
        arbitrary: fc.record({
          json: envelopeArb(t),
          mutations: mutationsArb(2),
        }),
        weight: 6,
      },
      fc.record({ raw: junkBody }),
    ),
    signature: fc.oneof(
      { arbitrary: fc.constant("valid" as const), weight: 8 },
      fc.constantFrom("none" as const, "bad" as const, "uppercase" as const),
    ),
  });
}

/** Signs the body with the app secret (or not, or wrongly, as the plan says). */
export function realizeMeta(
  plan: MetaPlan,
  t: MetaTargets,
): FuzzRequest {
  const body = "raw" in plan.body
    ? plan.body.raw
    : mutatedText(plan.body.json, plan.body.mutations);
  const headers: Record<string, string> = {
    "content-type": "application/json",
  };
  if (plan.signature === "valid") {
    headers["x-hub-signature-256"] = signMetaBody(t.appSecret, body);
  } else if (plan.signature === "bad") {
    headers["x-hub-signature-256"] = `sha256=${"0".repeat(64)}`;
  } else if (plan.signature === "uppercase") {
    headers["x-hub-signature-256"] = signMetaBody(t.appSecret, body)
      .toUpperCase();
  }
  return {
    label: "/meta/webhook",
    method: "POST",
    url: "/meta/webhook",
    headers,
    body,
  };
}

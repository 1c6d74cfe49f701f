import { z } from "zod";
import { deliverSigned, webhookEnvelope } from "./callbacks.ts";
import { storeMedia } from "./media.ts";
import {
  digitsOf,
  isUserId,
  newWamid,
  type SimulatorState,
  unixSeconds,
} from "./state.ts";

const MediaInput = z.strictObject({
  mimeType: z.string().min(1),
  dataBase64: z.string(),
  caption: z.string().optional(),
  filename: z.string().optional(),
  voice: z.boolean().optional(),
  animated: z.boolean().optional(),
});

const MEDIA_KEYS = ["image", "video", "audio", "document", "sticker"] as const;
const PASSTHROUGH_KEYS = [
  "location",
  "interactive",
  "reaction",
  "contacts",
  "button",
] as const;

/** POST /_sim/inbound: a customer message to deliver to the callback URL. */
export const InboundSchema = z.strictObject({
  to: z.string().min(1),
  /** The customer's phone; left out for a username user who withholds it. */
  from: z.string().regex(/^\+?[0-9]{5,20}$/, "must be an E.164 phone number")
    .optional(),
  /** The customer's BSUID (§4.7), sent as `from_user_id` and `contacts[].user_id`. */
  userId: z.string().refine(isUserId, "must be a business-scoped user id")
    .optional(),
  parentUserId: z.string().refine(isUserId, "must be a business-scoped user id")
    .optional(),
  username: z.string().min(1).optional(),
  name: z.string().optional(),
  type: z.enum([
    "text",
    ...MEDIA_KEYS,
    ...PASSTHROUGH_KEYS,
    "unsupported",
    "edit",
    "revoke",
  ]),
  /** The customer edits an earlier message of theirs: its wamid and the new text. */
  edit: z.strictObject({ originalId: z.string().min(1), text: z.string() })
    .optional(),
  /** The customer deletes an earlier message for everyone. */
  revoke: z.strictObject({ originalId: z.string().min(1) }).optional(),
  forwarded: z.boolean().optional(),
  frequentlyForwarded: z.boolean().optional(),
  /** A click-to-WhatsApp ad's `referral`, in Meta's field names (source_url, ctwa_clid, ...). */
  referral: z.looseObject({}).optional(),
  /** Sent by the business from the WhatsApp Business app (coexistence): an `smb_message_echoes` webhook. */
  echo: z.boolean().optional(),
  text: z.strictObject({ body: z.string() }).optional(),
  image: MediaInput.optional(),
  video: MediaInput.optional(),
  audio: MediaInput.optional(),
  document: MediaInput.optional(),
  sticker: MediaInput.optional(),
  location: z.looseObject({ latitude: z.number(), longitude: z.number() })
    .optional(),
  interactive: z.looseObject({ type: z.string() }).optional(),
  reaction: z.looseObject({ message_id: z.string() }).optional(),
  contacts: z.array(z.looseObject({})).optional(),
  button: z.looseObject({ text: z.string() }).optional(),
  context: z.looseObject({}).optional(),
  /** Unix seconds, to simulate an old message. */
  timestamp: z.number().int().nonnegative().optional(),
  /** Reuse a wamid, to simulate Meta delivering the same message again. */
  id: z.string().min(1).optional(),
  /** Follow the callback retry schedule instead of answering 502 on the first failure. */
  retry: z.boolean().optional(),
}).refine(
  (v) => v.type === "unsupported" || v[v.type] !== undefined,
  { message: "the object named by type is required" },
).refine((v) => v.from !== undefined || v.userId !== undefined, {
  message: "give from, userId or both",
});

export type InboundInput = z.infer<typeof InboundSchema>;

function decodeBase64(text: string): Uint8Array {
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Finds the business number by display number or phone number id. */
export function resolveBusinessNumber(
  state: SimulatorState,
  to: string,
): string | undefined {
  const digits = digitsOf(to);
  for (const n of state.numbers.values()) {
    if (n.displayPhoneNumber === digits && digits !== "") {
      return n.phoneNumberId;
    }
  }
  if (state.numbers.has(to)) return to;
  return to.startsWith("+") ? undefined : to;
}

async function messageObject(
  state: SimulatorState,
  input: InboundInput,
): Promise<{ message: Record<string, unknown>; mediaId: string | null }> {
  const message: Record<string, unknown> = {
    ...(input.from !== undefined ? { from: digitsOf(input.from) } : {}),
    ...(input.userId !== undefined ? { from_user_id: input.userId } : {}),
    id: input.id ?? newWamid(),
    timestamp: input.timestamp !== undefined
      ? String(input.timestamp)
      : unixSeconds(),
    type: input.type,
  };
  const context = {
    ...input.context,
    ...(input.forwarded ? { forwarded: true } : {}),
    ...(input.frequentlyForwarded ? { frequently_forwarded: true } : {}),
  };
  if (Object.keys(context).length) message.context = context;
  if (input.referral) message.referral = input.referral;
  let mediaId: string | null = null;
  const key = input.type;
  if (key === "text") {
    message.text = input.text;
  } else if (key === "edit") {
    message.edit = {
      original_message_id: input.edit!.originalId,
      message: { type: "text", text: { body: input.edit!.text } },
    };
  } else if (key === "revoke") {
    message.revoke = { original_message_id: input.revoke!.originalId };
  } else if (key === "unsupported") {
    message.errors = [{
      code: 131051,
      title: "Message type unknown",
      message: "Message type unknown",
      error_data: { details: "Message type is currently not supported." },
    }];
  } else if ((MEDIA_KEYS as readonly string[]).includes(key)) {
    const media = input[key as typeof MEDIA_KEYS[number]]!;
    const stored = await storeMedia(
      state,
      decodeBase64(media.dataBase64),
      media.mimeType,
    );
    mediaId = stored.id;
    message[key] = {
      id: stored.id,
      mime_type: stored.mimeType,
      sha256: stored.sha256,
      ...(media.caption !== undefined ? { caption: media.caption } : {}),
      ...(media.filename !== undefined ? { filename: media.filename } : {}),
      ...(key === "audio" ? { voice: media.voice ?? false } : {}),
      ...(key === "sticker" ? { animated: media.animated ?? false } : {}),
    };
  } else {
    message[key] = input[key as typeof PASSTHROUGH_KEYS[number]];
  }
  return { message, mediaId };
}

/** The same message as the business sent it from its app: from the business number, to the customer. */
function echoOf(
  state: SimulatorState,
  phoneNumberId: string,
  message: Record<string, unknown>,
): Record<string, unknown> {
  const { from, from_user_id, ...rest } = message;
  return {
    ...rest,
    from: state.numbers.get(phoneNumberId)?.displayPhoneNumber ??
      digitsOf(phoneNumberId),
    ...(from !== undefined ? { to: from } : {}),
    ...(from_user_id !== undefined ? { to_user_id: from_user_id } : {}),
  };
}

/** `value.contacts[0]`: the profile and whichever identifiers the customer shares (§4.7). */
function senderContact(input: InboundInput): Record<string, unknown> {
  return {
    profile: {
      name: input.name ?? "Customer",
      ...(input.username !== undefined ? { username: input.username } : {}),
    },
    ...(input.from !== undefined ? { wa_id: digitsOf(input.from) } : {}),
    ...(input.userId !== undefined ? { user_id: input.userId } : {}),
    ...(input.parentUserId !== undefined
      ? { parent_user_id: input.parentUserId }
      : {}),
  };
}

/** Builds the inbound webhook (§4.3/§4.4) and posts it signed; answers once the callback URL answered. */
export async function handleInbound(
  state: SimulatorState,
  input: InboundInput,
): Promise<Response> {
  const phoneNumberId = resolveBusinessNumber(state, input.to);
  if (!phoneNumberId) {
    return Response.json({
      error: { message: `Unknown business number "${input.to}"` },
    }, { status: 404 });
  }
  const { message, mediaId } = await messageObject(state, input);
  const wamid = message.id as string;
  const payload = input.echo
    ? webhookEnvelope(state, phoneNumberId, {
      message_echoes: [echoOf(state, phoneNumberId, message)],
    }, "smb_message_echoes")
    : webhookEnvelope(state, phoneNumberId, {
      contacts: [senderContact(input)],
      messages: [message],
    });
  const result = await deliverSigned(state, payload, {
    kind: "inbound",
    wamid,
  }, { retry: input.retry ?? false, signal: state.epoch.signal });
  if (!result.ok) {
    return Response.json({
      error: {
        message: "Callback URL did not accept the webhook",
        httpStatus: result.httpStatus,
        detail: result.error,
      },
      wamid,
    }, { status: 502 });
  }
  return Response.json({ wamid, ...(mediaId ? { mediaId } : {}) });
}

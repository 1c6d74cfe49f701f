import { z } from "zod";

/**
 * Meta's webhook envelope (reference §4.3-4.5). Loose objects: Meta adds
 * fields over time and an unknown field must never make us drop a message.
 */
/** Meta sends unix seconds as strings; accept a number too rather than drop the change. */
const UnixSeconds = z.union([z.string(), z.number()]).transform(String);

export const MetaError = z.looseObject({
  code: z.number(),
  title: z.string().optional(),
  message: z.string().optional(),
  error_data: z.looseObject({ details: z.string().optional() }).optional(),
});

export const MetaStatus = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  timestamp: UnixSeconds.optional(),
  recipient_id: z.string().optional(),
  /** BSUID of the recipient (§4.7); `recipient_id` only comes with a phone. */
  recipient_user_id: z.string().optional(),
  biz_opaque_callback_data: z.string().optional(),
  errors: z.array(MetaError).optional(),
});
export type MetaStatus = z.infer<typeof MetaStatus>;

export const MetaMessage = z.looseObject({
  /** The sender's phone digits; absent for a username user who withholds it (§4.7). */
  from: z.string().min(1).optional(),
  /**
   * The sender's BSUID. Read as is: a malformed one (empty, not a string, not
   * a BSUID) is ignored beside a usable `from` instead of losing the message.
   */
  from_user_id: z.unknown().optional(),
  id: z.string().min(1),
  timestamp: UnixSeconds.optional(),
  type: z.string(),
  context: z.looseObject({
    from: z.string().optional(),
    id: z.string().optional(),
    forwarded: z.boolean().optional(),
    frequently_forwarded: z.boolean().optional(),
  }).optional(),
  referral: z.looseObject({}).optional(),
  errors: z.array(MetaError).optional(),
});
export type MetaMessage = z.infer<typeof MetaMessage>;

/** `value.contacts[i]`: the sender's profile and identifiers (§4.3, §4.7). */
export const MetaContact = z.looseObject({
  wa_id: z.string().optional(),
  user_id: z.string().optional(),
  parent_user_id: z.string().optional(),
  profile: z.looseObject({
    name: z.string().optional(),
    username: z.string().optional(),
  }).optional(),
});
export type MetaContact = z.infer<typeof MetaContact>;

export const MetaValue = z.looseObject({
  metadata: z.looseObject({
    display_phone_number: z.string().optional(),
    phone_number_id: z.string(),
  }),
  // Each contact, message, status and error is parsed on its own: one bad
  // element must not take the rest of the change with it.
  contacts: z.array(z.unknown()).optional(),
  messages: z.array(z.unknown()).optional(),
  statuses: z.array(z.unknown()).optional(),
  /** Field `smb_message_echoes`: what the business sent from the WhatsApp Business app. */
  message_echoes: z.array(z.unknown()).optional(),
  errors: z.array(z.unknown()).optional(),
});
export type MetaValue = z.infer<typeof MetaValue>;

export const MetaPayload = z.looseObject({
  object: z.string(),
  entry: z.array(z.looseObject({
    id: z.string().optional(),
    changes: z.array(z.looseObject({
      field: z.string(),
      value: z.unknown(),
    })),
  })),
});
export type MetaPayload = z.infer<typeof MetaPayload>;

export const MEDIA_TYPES = [
  "image",
  "video",
  "audio",
  "document",
  "sticker",
] as const;
export type MediaKind = (typeof MEDIA_TYPES)[number];

export interface InboundContent {
  type: string;
  content: Record<string, unknown>;
  media?: {
    kind: MediaKind;
    upstreamId: string;
    mimeType: string;
    sha256: string | null;
    fileName: string;
  };
}

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/webp": "webp",
  "video/mp4": "mp4",
  "video/3gpp": "3gp",
  "audio/ogg": "ogg",
  "audio/mpeg": "mp3",
  "audio/mp4": "m4a",
  "audio/aac": "aac",
  "audio/amr": "amr",
  "application/pdf": "pdf",
  "text/plain": "txt",
};

function defaultFileName(
  kind: string,
  upstreamId: string,
  mime: string,
): string {
  const ext = EXTENSIONS[mime.split(";")[0]!.trim()] ?? "bin";
  return `${kind}-${upstreamId}.${ext}`;
}

/** Turns one Meta message into our stored type and content (text as `{ body }`). */
export function inboundContent(message: MetaMessage): InboundContent {
  const raw = message as Record<string, unknown>;
  // On-Premises style `voice` is a voice note: stored as audio marked voice.
  const type = message.type === "voice" ? "audio" : message.type;
  const body = (raw[message.type] ?? {}) as Record<string, unknown>;
  if (
    (MEDIA_TYPES as readonly string[]).includes(type) &&
    typeof body.id === "string"
  ) {
    const mimeType = typeof body.mime_type === "string"
      ? body.mime_type
      : "application/octet-stream";
    const fileName = typeof body.filename === "string" && body.filename
      ? body.filename
      : defaultFileName(type, body.id, mimeType);
    const content: Record<string, unknown> = { mimeType, fileName };
    if (typeof body.caption === "string") content.caption = body.caption;
    if (body.voice === true || message.type === "voice") content.voice = true;
    if (body.animated !== undefined) content.animated = body.animated;
    return {
      type,
      content,
      media: {
        kind: type as MediaKind,
        upstreamId: body.id,
        mimeType,
        sha256: typeof body.sha256 === "string" ? body.sha256 : null,
        fileName,
      },
    };
  }
  switch (type) {
    case "text":
      return { type, content: { body: String(body.body ?? "") } };
    case "location":
    case "interactive":
    case "button":
    case "reaction":
    case "order":
      return { type, content: body };
    case "contacts":
      return { type, content: { contacts: raw.contacts ?? [] } };
    case "system":
      return { type, content: body };
    default:
      return {
        type: "unsupported",
        content: {
          originalType: type,
          ...(message.errors?.[0] ? { error: message.errors[0] } : {}),
        },
      };
  }
}

import { isUuid } from "../../ids.ts";
import { NUL_PROBLEM, nulPath } from "../../text.ts";
import {
  SEND_TYPES,
  SendMessageBody,
  type SendMessageInput,
  type SendType,
} from "./outbound_schema.ts";
import { fastTemplateSend } from "./template_fast_path.ts";

export type SendProblemCode =
  | "MISSING_REQUIRED_FIELD"
  | "INVALID_CHANNEL"
  | "INVALID_MESSAGE_TYPE"
  | "VALIDATION_ERROR";

export interface SendProblem {
  code: SendProblemCode;
  message: string;
  details?: { path: string; message: string }[];
}

export type ParseResult =
  | { ok: true; value: SendMessageInput }
  | { ok: false; problem: SendProblem };

function missing(field: string, why = ""): ParseResult {
  return {
    ok: false,
    problem: {
      code: "MISSING_REQUIRED_FIELD",
      message: `Missing required field "${field}"${why}`,
    },
  };
}

/**
 * A channel id that is not a UUID is INVALID_CHANNEL, not a shape error: the
 * likely mistake is the upstream phone number id, and the message says so.
 */
function notAChannelId(field: string, value: unknown): ParseResult {
  return {
    ok: false,
    problem: {
      code: "INVALID_CHANNEL",
      message: `Invalid field "${field}": ${
        JSON.stringify(value)
      } is not a channel id; use the channel "id" (a UUID) from GET /channels, not the upstream phone number id`,
    },
  };
}

const isChannelId = (v: unknown) => typeof v === "string" && isUuid(v);

/**
 * Validates one message (POST /messages body or batch item) and names the
 * problem with the spec's codes: a missing field, an unsupported type, or
 * any other invalid value.
 */
export function parseSendMessage(
  raw: unknown,
  options: { defaultPhoneNumberId?: string | number | undefined } = {},
): ParseResult {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    return {
      ok: false,
      problem: {
        code: "VALIDATION_ERROR",
        message: "A message must be a JSON object",
      },
    };
  }
  const input = { ...(raw as Record<string, unknown>) };
  const type = input.type;
  if (type === undefined || type === null) return missing("type");
  if (
    typeof type !== "string" ||
    !(SEND_TYPES as readonly string[]).includes(type)
  ) {
    return {
      ok: false,
      problem: {
        code: "INVALID_MESSAGE_TYPE",
        // Only a string is echoed: any other value may be arbitrarily deep or large.
        message: `Unsupported message type ${
          typeof type === "string" ? JSON.stringify(type) : `(a ${typeof type})`
        }: use one of ${SEND_TYPES.join(", ")}`,
      },
    };
  }
  if (input[type] === undefined || input[type] === null) {
    return missing(type, ` for a ${type} message`);
  }
  if (input.to === undefined || input.to === null) return missing("to");
  if (input.phoneNumberId === undefined || input.phoneNumberId === null) {
    const fallback = options.defaultPhoneNumberId;
    if (fallback === undefined) return missing("phoneNumberId");
    if (!isChannelId(fallback)) {
      return notAChannelId("defaultPhoneNumberId", fallback);
    }
    input.phoneNumberId = fallback;
  } else if (!isChannelId(input.phoneNumberId)) {
    return notAChannelId("phoneNumberId", input.phoneNumberId);
  }
  const fast = fastTemplateSend(input);
  if (fast) return nulFree(fast);
  const result = SendMessageBody.safeParse(input);
  if (result.success) return nulFree(result.data);
  const details = result.error.issues.map((i) => ({
    path: i.path.map(String).join("."),
    message: i.message,
  }));
  const first = details[0]!;
  return {
    ok: false,
    problem: {
      code: "VALIDATION_ERROR",
      message: first.path
        ? `Invalid field "${first.path}": ${first.message}`
        : `Invalid message: ${first.message}`,
      details,
    },
  };
}

/**
 * A valid message, or VALIDATION_ERROR naming the first string or key that
 * holds a NUL (node:sqlite would read it back cut: src/text.ts).
 */
function nulFree(value: SendMessageInput): ParseResult {
  const path = nulPath(value);
  if (!path) return { ok: true, value };
  const field = path.join(".");
  return {
    ok: false,
    problem: {
      code: "VALIDATION_ERROR",
      message: `Invalid field "${field}": ${NUL_PROBLEM}`,
      details: [{ path: field, message: NUL_PROBLEM }],
    },
  };
}

/** The type's own object, as stored in messages.content. */
export function contentOf(input: SendMessageInput): Record<string, unknown> {
  return (input as unknown as Record<string, Record<string, unknown>>)[
    input.type
  ]!;
}

/** What an agent (user token or panel session) may send: its messages carry origin "panel". */
export const AGENT_SEND_TYPES: readonly SendType[] = [
  "text",
  "template",
  "reaction",
  "image",
  "video",
  "audio",
  "document",
];

/**
 * Why an agent may not send this message, or null when it may: text,
 * templates, reactions and media by link, without `metadata` (an agent's
 * messages always carry origin "panel" and its id).
 */
export function agentSendProblem(input: SendMessageInput): string | null {
  if (!AGENT_SEND_TYPES.includes(input.type)) {
    return `Agents cannot send "${input.type}" messages: only ${
      AGENT_SEND_TYPES.join(", ")
    }`;
  }
  if (input.metadata !== undefined) {
    return 'Agents cannot set "metadata": their messages carry origin "panel" and the agent\'s id';
  }
  const media = contentOf(input) as { id?: unknown };
  if (
    input.type !== "text" && input.type !== "template" &&
    input.type !== "reaction" && media.id !== undefined
  ) {
    return `Agents send media by "link", not by upstream "id"`;
  }
  return null;
}

/** Free-form messages need an open service window; templates do not. */
export function needsServiceWindow(type: SendType | string): boolean {
  return type !== "template";
}

const PREVIEW_LENGTH = 120;

/** The one-line preview kept on the conversation. */
export function previewOf(
  type: string,
  content: Record<string, unknown>,
): string {
  const cut = (s: string) =>
    s.length > PREVIEW_LENGTH ? `${s.slice(0, PREVIEW_LENGTH - 1)}…` : s;
  switch (type) {
    case "text":
      return cut(String(content.body ?? ""));
    case "template":
      return cut(`[template] ${String(content.name ?? "")}`);
    case "reaction":
      return cut(`[reaction] ${String(content.emoji ?? "")}`);
    case "interactive": {
      const body = content.body as { text?: string } | undefined;
      const reply = (content.button_reply ?? content.list_reply) as
        | { title?: string }
        | undefined;
      return cut(`[interactive] ${body?.text ?? reply?.title ?? ""}`.trim());
    }
    case "location":
      return cut(
        `[location] ${String(content.name ?? content.address ?? "")}`.trim(),
      );
    default: {
      const caption = content.caption ?? content.filename;
      return cut(`[${type}]${caption ? ` ${String(caption)}` : ""}`);
    }
  }
}

/** The Cloud API send body for a stored outbound message (messaging_product is added by the client). */
export function cloudMessageBody(
  message: { id: string; type: string; content: Record<string, unknown> },
  to: { phoneNumber: string | null; userId: string | null },
): Record<string, unknown> {
  return {
    recipient_type: "individual",
    // A username customer withholds the number: Meta takes the BSUID as `recipient` (§4.7).
    ...(to.phoneNumber
      ? { to: to.phoneNumber.replace(/^\+/, "") }
      : { recipient: to.userId }),
    type: message.type,
    [message.type]: message.content,
    biz_opaque_callback_data: message.id,
  };
}

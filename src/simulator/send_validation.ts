import { isUserId } from "./state.ts";
import type { Rejection } from "./sim_errors.ts";
import { validateTemplateComponents } from "./template_send_validation.ts";

type Obj = Record<string, unknown>;

export const MESSAGE_TYPES = [
  "text",
  "image",
  "video",
  "audio",
  "document",
  "sticker",
  "location",
  "contacts",
  "interactive",
  "template",
  "reaction",
] as const;

const MEDIA_TYPES = new Set(["image", "video", "audio", "document", "sticker"]);
const CAPTIONED = new Set(["image", "video", "document"]);
const INTERACTIVE_TYPES = new Set([
  "button",
  "list",
  "cta_url",
  "flow",
  "product",
  "product_list",
  "catalog_message",
  "location_request_message",
]);

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isText(v: unknown, max = Infinity): v is string {
  return typeof v === "string" && v !== "" && [...v].length <= max;
}

const missing = (param: string): Rejection => ({
  code: 131008,
  details: `The parameter ${param} is required.`,
});
const invalid = (details: string): Rejection => ({ code: 100, details });

function tooLong(param: string, max: number, value: unknown): Rejection | null {
  return typeof value === "string" && [...value].length > max
    ? invalid(`Param ${param} must be at most ${max} characters long.`)
    : null;
}

/** Checks a send body as POST /{phone-number-id}/messages does; null when it is acceptable. */
export function validateSend(body: Obj): Rejection | null {
  // `recipient` (a BSUID) addresses a username user; `to` wins when both are given (§4.7).
  if (body.to === undefined && body.recipient === undefined) {
    return missing("to");
  }
  if (body.to === undefined) {
    if (typeof body.recipient !== "string" || !isUserId(body.recipient)) {
      return {
        code: 131009,
        details: "Param recipient must be a business-scoped user id",
      };
    }
  } else if (
    typeof body.to !== "string" || !/^\+?[0-9]{5,20}$/.test(body.to)
  ) {
    return { code: 131009, details: "Param to must be a phone number" };
  }
  const rt = body.recipient_type;
  if (rt !== undefined && rt !== "individual" && rt !== "group") {
    return invalid("Param recipient_type must be individual or group");
  }
  if (body.type === undefined) return missing("type");
  const type = body.type;
  if (
    typeof type !== "string" ||
    !(MESSAGE_TYPES as readonly string[]).includes(type)
  ) {
    return { code: 131051, details: `Unsupported message type "${type}"` };
  }
  const payload = body[type];
  if (type === "contacts" ? !Array.isArray(payload) : !isObj(payload)) {
    return missing(type);
  }
  if (body.context !== undefined) {
    if (!isObj(body.context) || !isText(body.context.message_id)) {
      return invalid("Param context must have a message_id");
    }
  }
  const opaque = body.biz_opaque_callback_data;
  if (
    opaque !== undefined &&
    (typeof opaque !== "string" ||
      new TextEncoder().encode(opaque).length > 512)
  ) {
    return invalid("Param biz_opaque_callback_data must be at most 512 bytes");
  }
  if (MEDIA_TYPES.has(type)) return validateMedia(type, payload as Obj);
  switch (type) {
    case "text":
      return validateText(payload as Obj);
    case "location":
      return validateLocation(payload as Obj);
    case "contacts":
      return validateContacts(payload as unknown[]);
    case "interactive":
      return validateInteractive(payload as Obj);
    case "template":
      return validateTemplate(payload as Obj);
    default:
      return validateReaction(payload as Obj);
  }
}

function validateText(text: Obj): Rejection | null {
  if (!isText(text.body)) return missing("text['body']");
  return tooLong("text['body']", 4096, text.body);
}

function validateMedia(type: string, media: Obj): Rejection | null {
  const hasId = media.id !== undefined;
  const hasLink = media.link !== undefined;
  if (hasId === hasLink) {
    return invalid(`Param ${type} must have exactly one of id or link`);
  }
  if (hasId && !isText(media.id)) {
    return invalid(`Param ${type}['id'] is invalid`);
  }
  if (
    hasLink &&
    (typeof media.link !== "string" || !/^https?:\/\/\S+$/.test(media.link))
  ) {
    return invalid(`Param ${type}['link'] must be a valid URL`);
  }
  if (media.caption !== undefined && !CAPTIONED.has(type)) {
    return invalid(`Param ${type}['caption'] is not supported`);
  }
  return tooLong(`${type}['caption']`, 1024, media.caption);
}

function validateLocation(loc: Obj): Rejection | null {
  for (const key of ["latitude", "longitude"]) {
    if (typeof loc[key] !== "number" || !Number.isFinite(loc[key])) {
      return missing(`location['${key}']`);
    }
  }
  return null;
}

function validateContacts(cards: unknown[]): Rejection | null {
  if (cards.length === 0) return missing("contacts");
  for (const card of cards) {
    if (
      !isObj(card) || !isObj(card.name) || !isText(card.name.formatted_name)
    ) {
      return missing("contacts['name']['formatted_name']");
    }
  }
  return null;
}

function validateInteractive(msg: Obj): Rejection | null {
  if (typeof msg.type !== "string" || !INTERACTIVE_TYPES.has(msg.type)) {
    return invalid(`Param interactive['type'] "${msg.type}" is not valid`);
  }
  if (!isObj(msg.action)) return missing("interactive['action']");
  const needsBody = msg.type !== "product" && msg.type !== "catalog_message";
  const body = isObj(msg.body) ? msg.body : undefined;
  if (needsBody && !isText(body?.text)) return missing("interactive['body']");
  const long = tooLong("interactive['body']['text']", 1024, body?.text);
  if (long) return long;
  if (msg.type === "button") return validateButtons(msg.action);
  if (msg.type === "list") return validateList(msg.action);
  if (msg.type === "cta_url" || msg.type === "flow") {
    if (!isObj(msg.action.parameters)) {
      return missing("interactive['action']['parameters']");
    }
  }
  return null;
}

function validateButtons(action: Obj): Rejection | null {
  const buttons = action.buttons;
  if (!Array.isArray(buttons) || buttons.length < 1 || buttons.length > 3) {
    return invalid(
      "Param interactive['action']['buttons'] must have 1 to 3 buttons",
    );
  }
  const ids = new Set<string>();
  const titles = new Set<string>();
  for (const b of buttons) {
    const reply = isObj(b) && isObj(b.reply) ? b.reply : undefined;
    if (!reply || !isText(reply.id, 256) || !isText(reply.title, 20)) {
      return invalid(
        "Each reply button needs an id (<= 256) and a title (<= 20)",
      );
    }
    if (ids.has(reply.id) || titles.has(reply.title)) {
      return invalid("Reply button ids and titles must be unique");
    }
    ids.add(reply.id);
    titles.add(reply.title);
  }
  return null;
}

function validateList(action: Obj): Rejection | null {
  if (!isText(action.button, 20)) {
    return invalid(
      "Param interactive['action']['button'] must be 1 to 20 characters",
    );
  }
  const sections = action.sections;
  if (!Array.isArray(sections) || sections.length < 1 || sections.length > 10) {
    return invalid(
      "Param interactive['action']['sections'] must have 1 to 10 sections",
    );
  }
  let rows = 0;
  for (const s of sections) {
    if (!isObj(s) || !Array.isArray(s.rows)) return missing("sections['rows']");
    if (sections.length > 1 && !isText(s.title, 24)) {
      return invalid(
        "Each section needs a title (<= 24) when there are several",
      );
    }
    for (const r of s.rows) {
      rows++;
      if (!isObj(r) || !isText(r.id, 200) || !isText(r.title, 24)) {
        return invalid("Each row needs an id (<= 200) and a title (<= 24)");
      }
      const long = tooLong("row['description']", 72, r.description);
      if (long) return long;
    }
  }
  if (rows < 1 || rows > 10) {
    return invalid("A list must have 1 to 10 rows in total");
  }
  return null;
}

function validateTemplate(tpl: Obj): Rejection | null {
  if (!isText(tpl.name)) return missing("template['name']");
  if (!isObj(tpl.language) || !isText(tpl.language.code)) {
    return missing("template['language']['code']");
  }
  if (tpl.components === undefined) return null;
  if (!Array.isArray(tpl.components)) {
    return invalid("Param template['components'] must be an array");
  }
  return validateTemplateComponents(tpl.components);
}

function validateReaction(reaction: Obj): Rejection | null {
  if (!isText(reaction.message_id)) return missing("reaction['message_id']");
  if (typeof reaction.emoji !== "string") return missing("reaction['emoji']");
  return null;
}

// The common template send (a campaign item: name, language code, body text
// parameters) read without zod: SendMessageBody's answer for it, built the
// same way, at a fraction of the CPU (zod's discriminated unions and strict
// objects cost about 4 us an item). Anything else, valid or not, is left to
// zod. Checked against SendMessageBody in
// tests/domain/messages/template_fast_path_test.ts.
import { isUuid } from "../../ids.ts";
import type { SendMessageInput } from "./outbound_schema.ts";

type TemplateInput = Extract<SendMessageInput, { type: "template" }>;
type Json = Record<string, unknown>;

const TOP_KEYS = new Set([
  "phoneNumberId",
  "to",
  "clientRef",
  "type",
  "template",
]);
const TEMPLATE_KEYS = new Set(["name", "language", "components"]);
const LANGUAGE_KEYS = new Set(["code"]);
const COMPONENT_KEYS = new Set(["type", "parameters"]);
const PARAMETER_KEYS = new Set(["type", "text"]);
const NAME = /^[a-z0-9_]{1,512}$/;
const LANGUAGE = /^[a-z]{2,3}(?:_[A-Z]{2})?$/;
// A button needs sub_type and index, which this path leaves to zod.
const COMPONENT_TYPES = new Set(["header", "body"]);

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** True when every own key of `o` is one of `keys`. */
function onlyKeys(o: Json, keys: ReadonlySet<string>): boolean {
  for (const k of Object.keys(o)) if (!keys.has(k)) return false;
  return true;
}

function isString(v: unknown, min: number, max: number): v is string {
  return typeof v === "string" && v.length >= min && v.length <= max;
}

function components(raw: unknown): TemplateInput["template"]["components"] {
  if (!Array.isArray(raw) || raw.length > 20) return undefined;
  const out: NonNullable<TemplateInput["template"]["components"]> = [];
  for (const c of raw) {
    if (!isObject(c) || !onlyKeys(c, COMPONENT_KEYS)) return undefined;
    if (typeof c.type !== "string") return undefined;
    const type = c.type.toLowerCase();
    if (!COMPONENT_TYPES.has(type)) return undefined;
    const params = c.parameters;
    if (!Array.isArray(params) || params.length > 100) return undefined;
    const parameters: { type: "text"; text: string }[] = [];
    for (const p of params) {
      if (!isObject(p) || !onlyKeys(p, PARAMETER_KEYS)) return undefined;
      if (p.type !== "text" || !isString(p.text, 1, 1024)) return undefined;
      parameters.push({ type: "text", text: p.text });
    }
    out.push({ type: type as "header" | "body", parameters });
  }
  return out;
}

/**
 * SendMessageBody.parse(input) when `input` is a template send of the common
 * shape (header and body components of text parameters; no metadata,
 * language policy, button or parameter name), else undefined: zod decides. The keys come out in the
 * schema's order, as zod writes them.
 */
export function fastTemplateSend(input: Json): TemplateInput | undefined {
  if (input.type !== "template" || !onlyKeys(input, TOP_KEYS)) return undefined;
  const { phoneNumberId, to, clientRef, template } = input;
  if (typeof phoneNumberId !== "string" || !isUuid(phoneNumberId)) {
    return undefined;
  }
  if (!isString(to, 1, 160)) return undefined;
  if ("clientRef" in input && !isString(clientRef, 0, 256)) return undefined;
  if (!isObject(template) || !onlyKeys(template, TEMPLATE_KEYS)) {
    return undefined;
  }
  const { name, language } = template;
  if (typeof name !== "string" || !NAME.test(name)) return undefined;
  if (!isObject(language) || !onlyKeys(language, LANGUAGE_KEYS)) {
    return undefined;
  }
  if (typeof language.code !== "string" || !LANGUAGE.test(language.code)) {
    return undefined;
  }
  let parsed: TemplateInput["template"]["components"];
  if ("components" in template) {
    parsed = components(template.components);
    if (!parsed) return undefined;
  }
  return {
    phoneNumberId,
    to,
    ...("clientRef" in input ? { clientRef: clientRef as string } : {}),
    type: "template",
    template: {
      name,
      language: { code: language.code },
      ...(parsed ? { components: parsed } : {}),
    },
  };
}

// What a template takes at send time, read from its components as Meta
// defines them (GET /{waba-id}/message_templates, or `templates create
// --components`): the placeholders of its header and body, its header's
// format, and the parameter each of its buttons takes. Pure, and tolerant of
// any JSON: a definition it does not understand is left unchecked, never an
// error, so Meta stays the judge of what this does not know.

export type ParameterFormat = "POSITIONAL" | "NAMED";

/** A template as far as its send parameters go (a Template will do). */
export interface TemplateDefinition {
  components: readonly unknown[];
  /** Meta's `parameter_format`; read from the components when absent. */
  parameterFormat?: string | null | undefined;
}

export type HeaderPlan =
  /** No header, or a text header without placeholders: no parameters. */
  | { kind: "none" }
  | { kind: "text"; names: string[] }
  | { kind: "media"; format: "image" | "video" | "document" }
  | { kind: "location" }
  /** PRODUCT, GIF or a format this does not know: passed through. */
  | { kind: "unchecked"; format: string };

/** The one parameter a button component carries, by Meta's button type. */
export type ButtonParameterType = "payload" | "text" | "coupon_code" | "action";

export type ButtonPlan =
  /** `sub_type` and parameter type the send gives it; `required` when it must be sent. */
  | {
    kind: "dynamic";
    type: string;
    subType: string;
    parameter: ButtonParameterType;
    required: boolean;
    /** The URL with its placeholder, for a URL button. */
    url?: string;
  }
  /** PHONE_NUMBER, VOICE_CALL, a URL without placeholder: nothing to send. */
  | { kind: "static"; type: string }
  /** OTP (authentication) and types this does not know: passed through. */
  | { kind: "unchecked"; type: string };

export interface TemplatePlan {
  format: ParameterFormat;
  header: HeaderPlan;
  /** The body's placeholders; null when the body has no text to read (passed through). */
  body: string[] | null;
  /** By index: the template's BUTTONS in order. */
  buttons: ButtonPlan[];
}

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function upper(v: unknown): string {
  return typeof v === "string" ? v.toUpperCase() : "";
}

const PLACEHOLDER = /\{\{\s*([a-z0-9_]+)\s*\}\}/gi;

/** Distinct `{{1}}` / `{{name}}` placeholders of a text, in order of first appearance. */
export function placeholders(text: string): string[] {
  return [...new Set([...text.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

const isPosition = (name: string) => /^[0-9]+$/.test(name);

/** Positional placeholders in number order (`{{2}} … {{1}}` is filled 1, 2). */
function ordered(names: string[], format: ParameterFormat): string[] {
  if (format === "NAMED") return names;
  return [...names].sort((a, b) =>
    isPosition(a) && isPosition(b) ? Number(a) - Number(b) : 0
  );
}

/** The first component of a type (HEADER, BODY, BUTTONS), any case. */
function componentOf(components: readonly unknown[], type: string) {
  return components.find((c) => isObj(c) && upper(c.type) === type) as
    | Obj
    | undefined;
}

/**
 * NAMED when Meta says so, else when the examples are named
 * (`body_text_named_params`, `header_text_named_params`) or a header or body
 * placeholder is a name; POSITIONAL otherwise (Meta's default).
 */
export function parameterFormatOf(t: TemplateDefinition): ParameterFormat {
  const given = upper(t.parameterFormat);
  if (given === "NAMED" || given === "POSITIONAL") return given;
  for (const type of ["HEADER", "BODY"]) {
    const c = componentOf(t.components, type);
    if (!c) continue;
    const example = c.example;
    if (
      isObj(example) &&
      (example.body_text_named_params !== undefined ||
        example.header_text_named_params !== undefined)
    ) {
      return "NAMED";
    }
    if (
      typeof c.text === "string" &&
      placeholders(c.text).some((n) => !isPosition(n))
    ) {
      return "NAMED";
    }
  }
  return "POSITIONAL";
}

const MEDIA_FORMATS = new Set(["IMAGE", "VIDEO", "DOCUMENT"]);

function headerPlan(c: Obj | undefined, format: ParameterFormat): HeaderPlan {
  if (!c) return { kind: "none" };
  // A header without format is a text header (Meta's default).
  const f = c.format === undefined ? "TEXT" : upper(c.format);
  if (f === "TEXT") {
    const names = typeof c.text === "string" ? placeholders(c.text) : [];
    return names.length
      ? { kind: "text", names: ordered(names, format) }
      : { kind: "none" };
  }
  if (MEDIA_FORMATS.has(f)) {
    return {
      kind: "media",
      format: f.toLowerCase() as "image" | "video" | "document",
    };
  }
  if (f === "LOCATION") return { kind: "location" };
  return { kind: "unchecked", format: f || String(c.format) };
}

function buttonPlan(b: unknown): ButtonPlan {
  const type = isObj(b) ? upper(b.type) : "";
  const dynamic = (
    subType: string,
    parameter: ButtonParameterType,
    required: boolean,
    url?: string,
  ): ButtonPlan => ({
    kind: "dynamic",
    type,
    subType,
    parameter,
    required,
    ...(url === undefined ? {} : { url }),
  });
  switch (type) {
    case "QUICK_REPLY":
      return dynamic("quick_reply", "payload", false);
    case "URL": {
      const url = (b as Obj).url;
      if (typeof url === "string" && placeholders(url).length > 0) {
        return dynamic("url", "text", true, url);
      }
      return { kind: "static", type };
    }
    case "COPY_CODE":
      return dynamic("copy_code", "coupon_code", true);
    case "FLOW":
      return dynamic("flow", "action", false);
    case "CATALOG":
      return dynamic("catalog", "action", false);
    case "MPM":
      return dynamic("mpm", "action", true);
    case "PHONE_NUMBER":
    case "VOICE_CALL":
      return { kind: "static", type };
    default:
      return { kind: "unchecked", type: type || "unknown" };
  }
}

/** What a template takes at send time. */
export function templatePlan(t: TemplateDefinition): TemplatePlan {
  const format = parameterFormatOf(t);
  const body = componentOf(t.components, "BODY");
  const buttons = componentOf(t.components, "BUTTONS")?.buttons;
  return {
    format,
    header: headerPlan(componentOf(t.components, "HEADER"), format),
    body: !body
      ? []
      : typeof body.text === "string"
      ? ordered(placeholders(body.text), format)
      : null,
    buttons: Array.isArray(buttons) ? buttons.map(buttonPlan) : [],
  };
}

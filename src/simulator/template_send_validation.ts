// The checks Meta runs on a template send's components before it looks the
// template up: each component's shape, each parameter's own object, the one
// parameter a header takes, the formats a body and each button sub_type take,
// named and positional parameters not mixed, and the text rules of a
// parameter. What needs the template's definition (how many placeholders)
// is not known here.
import type { Rejection } from "./sim_errors.ts";

type Obj = Record<string, unknown>;

const COMPONENTS = new Set([
  "header",
  "body",
  "button",
  "carousel",
  "limited_time_offer",
]);
const HEADER_FORMATS = new Set([
  "text",
  "currency",
  "date_time",
  "image",
  "video",
  "document",
  "location",
  "product",
  "gif",
]);
const BODY_FORMATS = new Set(["text", "currency", "date_time"]);
/** The parameter type each button sub_type takes. */
const BUTTON_FORMATS: Record<string, string> = {
  quick_reply: "payload",
  url: "text",
  copy_code: "coupon_code",
  flow: "action",
  catalog: "action",
  mpm: "action",
};
const MEDIA = new Set(["image", "video", "document", "gif"]);

function isObj(v: unknown): v is Obj {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const required = (param: string): Rejection => ({
  code: 131008,
  details: `The parameter ${param} is required.`,
});
const invalid = (details: string): Rejection => ({ code: 100, details });
const mismatch = (part: string, expected: string, got: string) => ({
  code: 132012,
  details:
    `${part}: Format mismatch, expected ${expected.toUpperCase()}, received ${
      (got || "unknown").toUpperCase()
    }`,
});

/** A parameter's own object, as its type names it. */
function checkParameter(p: Obj, at: string): Rejection | null {
  const type = String(p.type);
  const value = p[type];
  const field = (key: string) => `${at}['${type}']['${key}']`;
  if (type === "text") {
    if (typeof p.text !== "string" || p.text === "") {
      return required(`${at}['text']`);
    }
    return null;
  }
  if (type === "payload" || type === "coupon_code") {
    return typeof value === "string" && value !== ""
      ? null
      : required(`${at}['${type}']`);
  }
  if (!isObj(value)) return required(`${at}['${type}']`);
  if (
    MEDIA.has(type) && (value.id === undefined) === (value.link === undefined)
  ) {
    return invalid(
      `Param ${at}['${type}'] must have exactly one of id or link`,
    );
  }
  if (type === "currency") {
    if (typeof value.fallback_value !== "string") {
      return required(field("fallback_value"));
    }
    if (typeof value.code !== "string") return required(field("code"));
    if (!Number.isInteger(value.amount_1000)) {
      return required(field("amount_1000"));
    }
  }
  if (type === "date_time" && typeof value.fallback_value !== "string") {
    return required(field("fallback_value"));
  }
  if (type === "location") {
    for (const key of ["latitude", "longitude"]) {
      if (value[key] === undefined) return required(field(key));
    }
  }
  return null;
}

/** Checks `template.components` as the Cloud API does; null when it is acceptable. */
export function validateTemplateComponents(
  components: unknown[],
): Rejection | null {
  let named: boolean | undefined;
  for (const [i, c] of components.entries()) {
    const at = `template['components'][${i}]`;
    if (!isObj(c) || typeof c.type !== "string") {
      return required(`${at}['type']`);
    }
    const type = c.type.toLowerCase();
    if (!COMPONENTS.has(type)) {
      return invalid(`Param ${at}['type'] must be one of ${[...COMPONENTS]}`);
    }
    if (type === "carousel") {
      if (!Array.isArray(c.cards)) return required(`${at}['cards']`);
      continue;
    }
    let subType = "";
    if (type === "button") {
      if (typeof c.sub_type !== "string") return required(`${at}['sub_type']`);
      subType = c.sub_type.toLowerCase();
      if (c.index === undefined) return required(`${at}['index']`);
      if (!/^[0-9]$/.test(String(c.index))) {
        return invalid(`Param ${at}['index'] must be a button index, 0 to 9`);
      }
    }
    if (!Array.isArray(c.parameters)) return required(`${at}['parameters']`);
    if (type === "header" && c.parameters.length > 1) {
      return {
        code: 132000,
        details:
          `header: number of localizable_params (${c.parameters.length}) does not match the expected number of params (1)`,
      };
    }
    for (const [j, p] of c.parameters.entries()) {
      const pat = `${at}['parameters'][${j}]`;
      if (!isObj(p) || typeof p.type !== "string") {
        return required(`${pat}['type']`);
      }
      const format = p.type;
      if (type === "header" && !HEADER_FORMATS.has(format)) {
        return mismatch("header", "text", format);
      }
      if (type === "body" && !BODY_FORMATS.has(format)) {
        return mismatch("body", "text", format);
      }
      const wants = BUTTON_FORMATS[subType];
      if (type === "button" && wants && format !== wants) {
        return mismatch("button", wants, format);
      }
      const shape = checkParameter(p, pat);
      if (shape) return shape;
      if (BODY_FORMATS.has(format) && type !== "button") {
        // One template is named or positional throughout (header and body).
        const hasName = typeof p.parameter_name === "string" &&
          p.parameter_name !== "";
        if (named !== undefined && named !== hasName) {
          return invalid("Parameter name is missing or empty");
        }
        named = hasName;
      }
      if (
        format === "text" && type !== "button" &&
        /[\n\r\t]| {5,}/.test(p.text as string)
      ) {
        return invalid(
          "Param text cannot have new-line/tab characters or more than 4 consecutive spaces",
        );
      }
    }
  }
  return null;
}

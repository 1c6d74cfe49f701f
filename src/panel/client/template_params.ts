// What a template needs filled in before it is sent, and the send's
// `components` from the values: header text or media, body parameters
// (positional {{1}} or named {{name}}), URL button suffixes, copy-code.
import { MEDIA_KINDS } from "../../upstream/media_limits.ts";
import type { Template } from "./types.ts";

export interface Field {
  /** Where the value goes: "header", "body", or "button:<index>". */
  where: string;
  kind: "text" | "media" | "coupon";
  /** The placeholder's name ("1", "first_name") or the media format. */
  name: string;
  /** The button's label, for URL buttons. */
  label?: string;
}

function placeholders(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(/\{\{\s*([\w]+)\s*\}\}/g)) {
    if (!names.includes(m[1]!)) names.push(m[1]!);
  }
  return names;
}

export function fieldsOf(template: Template): Field[] {
  const out: Field[] = [];
  for (const c of template.components) {
    const type = c.type.toUpperCase();
    if (type === "HEADER") {
      const format = (c.format ?? "TEXT").toUpperCase();
      if (format === "TEXT") {
        for (const name of placeholders(c.text ?? "")) {
          out.push({ where: "header", kind: "text", name });
        }
      } else if (["IMAGE", "VIDEO", "DOCUMENT"].includes(format)) {
        out.push({
          where: "header",
          kind: "media",
          name: format.toLowerCase(),
        });
      }
    } else if (type === "BODY") {
      for (const name of placeholders(c.text ?? "")) {
        out.push({ where: "body", kind: "text", name });
      }
    } else if (type === "BUTTONS") {
      (c.buttons ?? []).forEach((b, index) => {
        const kind = b.type.toUpperCase();
        if (kind === "URL" && /\{\{/.test(b.url ?? "")) {
          out.push({
            where: `button:${index}`,
            kind: "text",
            name: "1",
            label: b.text ?? "",
          });
        } else if (kind === "COPY_CODE") {
          out.push({ where: `button:${index}`, kind: "coupon", name: "code" });
        }
      });
    }
  }
  return out;
}

/** A header file uploaded to Meta (POST /api/v1/media): sent by its id. */
export interface Uploaded {
  id: string;
  fileName: string;
}

/** What the file picker of a media header offers (the Cloud API's types). */
export const ACCEPT: Record<string, string> = Object.fromEntries(
  MEDIA_KINDS.map((k) => [k.type, k.mimeTypes.join(",")]),
);

/** The key of a field's value: where it goes and its name. */
export function keyOf(field: Field): string {
  return `${field.where}:${field.name}`;
}

/** The problem of a value, or null: every field filled, media as https links or uploaded. */
export function problemOf(
  field: Field,
  value: string,
  uploaded?: Uploaded,
): "fieldRequired" | "needsHttps" | null {
  if (field.kind === "media" && uploaded) return null;
  if (!value.trim()) return "fieldRequired";
  if (field.kind === "media" && !/^https:\/\/\S+$/.test(value.trim())) {
    return "needsHttps";
  }
  return null;
}

/** The template's text with the values in place (header, body, footer), for the preview. */
export function previewOf(
  template: Template,
  values: Map<string, string>,
): { header: string; body: string; footer: string; buttons: string[] } {
  const fill = (where: string, text: string) =>
    text.replace(
      /\{\{\s*([\w]+)\s*\}\}/g,
      (whole, name: string) => values.get(`${where}:${name}`)?.trim() || whole,
    );
  const part = (type: string) =>
    template.components.find((c) => c.type.toUpperCase() === type);
  const header = part("HEADER");
  return {
    header: header
      ? (header.format ?? "TEXT").toUpperCase() === "TEXT"
        ? fill("header", header.text ?? "")
        : `[${(header.format ?? "").toLowerCase()}]`
      : "",
    body: fill("body", part("BODY")?.text ?? ""),
    footer: part("FOOTER")?.text ?? "",
    buttons: (part("BUTTONS")?.buttons ?? []).map((b) => b.text ?? ""),
  };
}

/** The send's `template.components` from the filled-in fields. */
export function componentsOf(
  fields: Field[],
  values: Map<string, string>,
  uploads: Map<string, Uploaded> = new Map(),
): Record<string, unknown>[] {
  const value = (f: Field) => values.get(keyOf(f)) ?? "";
  const media = (f: Field) => {
    const file = uploads.get(keyOf(f));
    if (!file) return { link: value(f).trim() };
    // A document header shows its file name in WhatsApp.
    return f.name === "document"
      ? { id: file.id, filename: file.fileName }
      : { id: file.id };
  };
  const out: Record<string, unknown>[] = [];
  const header = fields.filter((f) => f.where === "header");
  if (header.length) {
    out.push({
      type: "header",
      parameters: header.map((f) =>
        f.kind === "media"
          ? { type: f.name, [f.name]: media(f) }
          : textParam(f, value(f))
      ),
    });
  }
  const body = fields.filter((f) => f.where === "body");
  if (body.length) {
    out.push({
      type: "body",
      parameters: body.map((f) => textParam(f, value(f))),
    });
  }
  for (const f of fields.filter((x) => x.where.startsWith("button:"))) {
    const index = f.where.split(":")[1]!;
    out.push(
      f.kind === "coupon"
        ? {
          type: "button",
          sub_type: "copy_code",
          index,
          parameters: [{ type: "coupon_code", coupon_code: value(f).trim() }],
        }
        : {
          type: "button",
          sub_type: "url",
          index,
          parameters: [{ type: "text", text: value(f).trim() }],
        },
    );
  }
  return out;
}

function textParam(f: Field, value: string) {
  return /^\d+$/.test(f.name)
    ? { type: "text", text: value.trim() }
    : { type: "text", text: value.trim(), parameter_name: f.name };
}

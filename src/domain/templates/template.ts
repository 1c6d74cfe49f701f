import { AppError } from "../../errors.ts";
import { jsonBoundsProblem } from "../json_bounds.ts";
import { NUL_PROBLEM, nulPath } from "../../text.ts";

export const TEMPLATE_CATEGORIES = [
  "MARKETING",
  "UTILITY",
  "AUTHENTICATION",
] as const;
export type TemplateCategory = (typeof TEMPLATE_CATEGORIES)[number];

export const TEMPLATE_STATUSES = [
  "pending",
  "approved",
  "rejected",
  "disabled",
  "paused",
] as const;
export type TemplateStatus = (typeof TEMPLATE_STATUSES)[number];

export const COMPONENT_TYPES = ["HEADER", "BODY", "FOOTER", "BUTTONS"] as const;
export type ComponentType = (typeof COMPONENT_TYPES)[number];

/** One element of `components`, e.g. `{ type: "BODY", text: "Hi {{1}}" }`; other keys are kept as given. */
export interface TemplateComponent {
  type: ComponentType;
  [key: string]: unknown;
}

/** `parameter_format` of a Meta template: `{{1}}` placeholders or `{{first_name}}`. */
export type ParameterFormat = "POSITIONAL" | "NAMED";

/** Where a template comes from: synced from its WABA, or made by hand (`templates create`). */
export type TemplateSource = "meta" | "local";

export interface Template {
  id: string;
  accountId: string;
  /** null for a global template (usable on every channel of the account). */
  channelId: string | null;
  metaTemplateId: string | null;
  name: string;
  language: string;
  category: TemplateCategory;
  status: TemplateStatus;
  /** As Meta returns them for a synced template (Meta's JSON format), as given for a local one. */
  components: TemplateComponent[];
  createdAt: string;
  /** The WABA of a synced template (every channel of it can send it); null for a local one. */
  wabaId: string | null;
  source: TemplateSource;
  /** Meta's own status (PAUSED, IN_APPEAL, LOCKED ...); null for a local template. */
  metaStatus: string | null;
  /** As Meta stores it; null when Meta gave none (POSITIONAL is Meta's default). */
  parameterFormat: ParameterFormat | null;
  /** GREEN, YELLOW, RED or UNKNOWN. */
  qualityScore: string | null;
  rejectedReason: string | null;
  previousCategory: string | null;
  correctCategory: string | null;
  /** When Meta flagged it (at risk of being disabled; still sendable). */
  flaggedAt: string | null;
  syncedAt: string | null;
}

/** The Template of the API (the spec's fields, then what the sync adds). */
export interface TemplateView {
  id: string;
  phoneNumberId: string | null;
  metaTemplateId: string | null;
  name: string;
  language: string;
  category: TemplateCategory;
  status: TemplateStatus;
  components: TemplateComponent[];
  createdAt: string;
  wabaId: string | null;
  source: TemplateSource;
  metaStatus: string | null;
  parameterFormat: ParameterFormat | null;
  qualityScore: string | null;
  rejectedReason: string | null;
  syncedAt: string | null;
}

export const TEMPLATE_NAME_REGEXP = /^[a-z0-9_]{1,512}$/;
/** `en`, `es_AR`, `en_US` (Meta's language codes). */
export const TEMPLATE_LANGUAGE_REGEXP = /^[a-z]{2,3}(?:_[A-Z]{2})?$/;
export const MAX_COMPONENTS = 20;

export function templateView(t: Template): TemplateView {
  return {
    id: t.id,
    phoneNumberId: t.channelId,
    metaTemplateId: t.metaTemplateId,
    name: t.name,
    language: t.language,
    category: t.category,
    status: t.status,
    components: t.components,
    createdAt: t.createdAt,
    wabaId: t.wabaId,
    source: t.source,
    metaStatus: t.metaStatus,
    parameterFormat: t.parameterFormat,
    qualityScore: t.qualityScore,
    rejectedReason: t.rejectedReason,
    syncedAt: t.syncedAt,
  };
}

export function isTemplateStatus(value: string): value is TemplateStatus {
  return (TEMPLATE_STATUSES as readonly string[]).includes(value);
}

export function isTemplateCategory(value: string): value is TemplateCategory {
  return (TEMPLATE_CATEGORIES as readonly string[]).includes(value);
}

function invalid(message: string): AppError {
  return new AppError("VALIDATION_ERROR", `Cannot save template: ${message}`);
}

/** Checks the fields of a new template; throws VALIDATION_ERROR naming the first problem. */
export function checkTemplateFields(input: {
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown;
}): void {
  if (!TEMPLATE_NAME_REGEXP.test(input.name)) {
    throw invalid(
      `name "${input.name}" must be 1 to 512 lowercase letters, digits and underscores`,
    );
  }
  if (!TEMPLATE_LANGUAGE_REGEXP.test(input.language)) {
    throw invalid(
      `language "${input.language}" must look like "en", "es_AR" or "en_US"`,
    );
  }
  if (!isTemplateCategory(input.category)) {
    throw invalid(
      `category "${input.category}" must be one of ${
        TEMPLATE_CATEGORIES.join(", ")
      }`,
    );
  }
  if (!isTemplateStatus(input.status)) {
    throw invalid(
      `status "${input.status}" must be one of ${TEMPLATE_STATUSES.join(", ")}`,
    );
  }
  checkComponents(input.components);
}

/** Components are an array of objects, each with a known `type`, within the JSON bounds. */
export function checkComponents(
  components: unknown,
): asserts components is TemplateComponent[] {
  if (!Array.isArray(components)) {
    throw invalid("components must be an array");
  }
  if (components.length > MAX_COMPONENTS) {
    throw invalid(`components may have at most ${MAX_COMPONENTS} elements`);
  }
  // GET /templates shows them as stored: past the bounds they would break it.
  const unbounded = jsonBoundsProblem(components);
  if (unbounded) throw invalid(`components ${unbounded}`);
  const nul = nulPath(components);
  if (nul) {
    const at = nul.map((k) => typeof k === "number" ? `[${k}]` : `.${k}`);
    throw invalid(`components${at.join("")} ${NUL_PROBLEM}`);
  }
  components.forEach((c, i) => {
    if (typeof c !== "object" || c === null || Array.isArray(c)) {
      throw invalid(`components[${i}] must be an object`);
    }
    const type = (c as { type?: unknown }).type;
    if (!(COMPONENT_TYPES as readonly unknown[]).includes(type)) {
      throw invalid(
        `components[${i}].type must be one of ${COMPONENT_TYPES.join(", ")}`,
      );
    }
    const text = (c as { text?: unknown }).text;
    if (text !== undefined && typeof text !== "string") {
      throw invalid(`components[${i}].text must be a string`);
    }
  });
}

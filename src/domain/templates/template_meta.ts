/**
 * Meta's template, read into ours (reference meta-management.md §1): its
 * status mapped onto the spec's five, its language written as we write it,
 * its components kept exactly as Meta returns them.
 */
import {
  isTemplateCategory,
  type ParameterFormat,
  TEMPLATE_NAME_REGEXP,
  type TemplateCategory,
  type TemplateComponent,
  type TemplateStatus,
} from "./template.ts";

/** Meta statuses that leave the status as it is: the template stays as sendable as it was. */
export const KEEPS_STATUS = new Set(["LOCKED", "FLAGGED", "UNLOCKED"]);
/** Meta events after which the template is read again (its status is not in the event). */
export const REFETCH_EVENTS = new Set(["REINSTATED", "UNARCHIVED", "UNLOCKED"]);

/**
 * The spec's status for Meta's: APPROVED approved; PENDING and IN_APPEAL
 * pending; REJECTED rejected; PAUSED paused; DISABLED, DELETED,
 * PENDING_DELETION, ARCHIVED, LIMIT_EXCEEDED and anything unknown disabled
 * (not sendable). LOCKED and FLAGGED keep `previous` (approved for a
 * template seen first in that state: Meta locks and flags approved ones).
 */
export function statusFromMeta(
  meta: string,
  previous?: TemplateStatus,
): TemplateStatus {
  switch (meta.toUpperCase()) {
    case "APPROVED":
      return "approved";
    case "PENDING":
    case "IN_APPEAL":
      return "pending";
    case "REJECTED":
      return "rejected";
    case "PAUSED":
      return "paused";
  }
  if (KEEPS_STATUS.has(meta.toUpperCase())) return previous ?? "approved";
  return "disabled";
}

/** `en-US` (as some of Meta's webhook examples write it) as `en_US`. */
export function normalizeLanguage(language: string): string {
  return language.replace("-", "_");
}

/** What a synced template holds, read from Meta's object. */
export interface SyncedTemplate {
  metaTemplateId: string;
  name: string;
  language: string;
  category: TemplateCategory;
  status: TemplateStatus;
  metaStatus: string;
  components: TemplateComponent[];
  parameterFormat: ParameterFormat | null;
  qualityScore: string | null;
  rejectedReason: string | null;
  previousCategory: string | null;
  correctCategory: string | null;
}

function text(v: unknown): string | null {
  return typeof v === "string" && v !== ""
    ? v
    : typeof v === "number"
    ? String(v)
    : null;
}

/** GREEN, YELLOW, RED or UNKNOWN from `quality_score` (`{ score }`, or a bare string in some answers). */
export function qualityOf(v: unknown): string | null {
  const score = typeof v === "object" && v !== null
    ? (v as { score?: unknown }).score
    : v;
  return typeof score === "string" && score !== "" ? score.toUpperCase() : null;
}

export function parameterFormatOf(v: unknown): ParameterFormat | null {
  const format = typeof v === "string" ? v.toUpperCase() : null;
  return format === "NAMED" || format === "POSITIONAL" ? format : null;
}

/**
 * Meta's template object read into a SyncedTemplate, or why it cannot be
 * (no id, name or language). `previous` is the stored row, whose status a
 * LOCKED template keeps and whose category an unknown one keeps.
 */
export function readMetaTemplate(
  raw: Record<string, unknown>,
  previous?: { status: TemplateStatus; category: TemplateCategory },
): SyncedTemplate | { problem: string } {
  const id = text(raw.id);
  const name = text(raw.name);
  const language = text(raw.language);
  if (!id || !name || !language) {
    return { problem: "it has no id, name or language" };
  }
  if (!TEMPLATE_NAME_REGEXP.test(name)) {
    return { problem: `its name "${name}" is not a template name` };
  }
  const metaStatus = (text(raw.status) ?? "UNKNOWN").toUpperCase();
  const category = (text(raw.category) ?? "").toUpperCase();
  const rejected = text(raw.rejected_reason);
  return {
    metaTemplateId: id,
    name,
    language: normalizeLanguage(language),
    category: isTemplateCategory(category)
      ? category
      : previous?.category ?? "UTILITY",
    status: statusFromMeta(metaStatus, previous?.status),
    metaStatus,
    // Exactly as Meta returns them: the send-time validator reads Meta's format.
    components: Array.isArray(raw.components)
      ? raw.components as TemplateComponent[]
      : [],
    parameterFormat: parameterFormatOf(raw.parameter_format),
    qualityScore: qualityOf(raw.quality_score),
    rejectedReason: rejected && rejected !== "NONE" ? rejected : null,
    previousCategory: text(raw.previous_category),
    correctCategory: text(raw.correct_category),
  };
}

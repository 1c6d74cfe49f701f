/**
 * Template management webhooks (reference meta-management.md §2):
 * status, quality, components and category changes of a WABA's templates,
 * found by Meta's id (or name and language). An unknown template, a
 * components change and REINSTATED/UNARCHIVED/UNLOCKED queue a read of the
 * template from Meta; an event older than the last one applied to the same
 * aspect of the template changes nothing.
 */
import type { TemplatesTable } from "../../db/schema.ts";
import { toDbTime } from "../../db/time.ts";
import { enqueue, wakeHeld } from "../../jobs/queue.ts";
import {
  isTemplateCategory,
  type TemplateStatus,
} from "../templates/template.ts";
import {
  KEEPS_STATUS,
  normalizeLanguage,
  qualityOf,
  REFETCH_EVENTS,
  statusFromMeta,
} from "../templates/template_meta.ts";
import {
  findByKey,
  findByMetaId,
  sameTemplateRow,
  updateTemplateRow,
} from "../templates/template_sync_repo.ts";
import { templateHoldKey } from "../templates/template_store_service.ts";
import {
  type Applied,
  isStale,
  latest,
  type ManagementChange,
  str,
} from "./management_change.ts";

/** The template a change names, by Meta's id, else by name and language. */
async function templateOf(
  change: ManagementChange,
): Promise<TemplatesTable | undefined> {
  const { db, waba, value } = change;
  const metaId = str(value.message_template_id);
  if (metaId) {
    const byId = await findByMetaId(db, {
      wabaId: waba.id,
      metaTemplateId: metaId,
    });
    if (byId) return byId;
  }
  const name = str(value.message_template_name);
  const language = str(value.message_template_language);
  if (!name || !language) return undefined;
  return await findByKey(db, {
    wabaId: waba.id,
    name,
    language: normalizeLanguage(language),
  });
}

/** Updates the template, guarded on it being as read (its watermarks, its status). */
async function updateTemplate(
  change: ManagementChange,
  template: TemplatesTable,
  patch: Parameters<typeof updateTemplateRow>[2],
): Promise<void> {
  change.writes.expectRow(sameTemplateRow(template));
  await updateTemplateRow(change.writes.db, template.id, patch);
}

/**
 * Queues a read of the template from Meta: by the id we hold for it (a
 * known template), else the event's id, else its name.
 */
async function queueRefresh(
  change: ManagementChange,
  why: string,
  options: {
    outcome?: Applied["outcome"];
    known?: TemplatesTable | undefined;
  } = {},
): Promise<Applied> {
  const outcome = options.outcome ?? "refresh_queued";
  const metaId = options.known?.meta_template_id ??
    str(change.value.message_template_id);
  const name = options.known?.name ?? str(change.value.message_template_name);
  if (!metaId && !name) {
    return { outcome: "unreadable", note: "it names no template" };
  }
  await enqueue(change.writes.db, {
    kind: "template.refresh",
    payload: {
      wabaId: change.waba.id,
      ...(metaId ? { metaTemplateId: metaId } : { name: name! }),
    },
    uniqueKey: `template.refresh:${change.waba.id}:${change.eventId}`,
  }, change.now);
  return { outcome, note: why, subject: options.known?.id ?? metaId ?? name! };
}

/** A change naming a template not known here: it is read from Meta. */
async function unknownTemplate(change: ManagementChange): Promise<Applied> {
  return await queueRefresh(
    change,
    "the template is not known here: read from Meta",
    { outcome: "unknown_template" },
  );
}

/** message_template_status_update: the template's status, Meta's own kept beside it. */
export async function applyTemplateStatus(
  change: ManagementChange,
): Promise<Applied> {
  const event = (str(change.value.event) ?? "").toUpperCase();
  if (!event) return { outcome: "unreadable", note: "it has no event" };
  const template = await templateOf(change);
  if (!template) {
    return { ...await unknownTemplate(change), event };
  }
  const subject = template.id;
  if (isStale(change.entryTime, template.status_event_at)) {
    return { outcome: "stale", subject, event };
  }
  const at = toDbTime(change.now);
  const watermark = latest(change.entryTime, template.status_event_at);
  if (REFETCH_EVENTS.has(event)) {
    // The event does not say what the template became: ask Meta.
    await updateTemplate(change, template, {
      status_event_at: watermark,
      ...(event === "REINSTATED" ? { flagged_at: null } : {}),
      updated_at: at,
    });
    return {
      ...await queueRefresh(change, `${event}: read again`, {
        known: template,
      }),
      event,
    };
  }
  if (event === "FLAGGED") {
    await updateTemplate(change, template, {
      flagged_at: template.flagged_at ?? at,
      status_event_at: watermark,
      updated_at: at,
    });
    return { outcome: "applied", subject, event, note: "flag recorded" };
  }
  const status = statusFromMeta(event, template.status as TemplateStatus);
  const reason = str(change.value.reason);
  await updateTemplate(change, template, {
    status,
    meta_status: event,
    ...(event === "REJECTED"
      ? { rejected_reason: reason && reason !== "NONE" ? reason : null }
      : event === "APPROVED"
      ? { rejected_reason: null, flagged_at: null }
      : {}),
    status_event_at: watermark,
    updated_at: at,
  });
  if (status === "approved" && template.status !== "approved") {
    await wakeHeld(change.writes.db, templateHoldKey(template.id), change.now);
  }
  return {
    outcome: "applied",
    subject,
    event,
    ...(KEEPS_STATUS.has(event) ? { note: "status kept" } : {}),
  };
}

/** message_template_quality_update: the template's quality score. */
export async function applyTemplateQuality(
  change: ManagementChange,
): Promise<Applied> {
  const score = qualityOf(change.value.new_quality_score);
  if (!score) return { outcome: "unreadable", note: "it has no new score" };
  const template = await templateOf(change);
  if (!template) {
    return await unknownTemplate(change);
  }
  if (isStale(change.entryTime, template.quality_event_at)) {
    return { outcome: "stale", subject: template.id, event: score };
  }
  await updateTemplate(change, template, {
    quality_score: score,
    quality_event_at: latest(change.entryTime, template.quality_event_at),
    updated_at: toDbTime(change.now),
  });
  return { outcome: "applied", subject: template.id, event: score };
}

/**
 * message_template_components_update: the template was edited; the event
 * is not its whole definition (no header format, no examples): read it.
 */
export async function applyTemplateComponents(
  change: ManagementChange,
): Promise<Applied> {
  return await queueRefresh(change, "edited at Meta: read again", {
    known: await templateOf(change),
  });
}

/**
 * template_category_update: an impending change (24 h notice: the correct
 * category is recorded) or a completed one (the category changes, the
 * previous one is kept).
 */
export async function applyTemplateCategory(
  change: ManagementChange,
): Promise<Applied> {
  const template = await templateOf(change);
  if (!template) {
    return await unknownTemplate(change);
  }
  const subject = template.id;
  if (isStale(change.entryTime, template.category_event_at)) {
    return { outcome: "stale", subject };
  }
  const v = change.value;
  const next = (str(v.new_category) ?? "").toUpperCase();
  const correct = str(v.correct_category)?.toUpperCase() ?? null;
  const watermark = latest(change.entryTime, template.category_event_at);
  const at = toDbTime(change.now);
  if (correct) {
    await updateTemplate(change, template, {
      correct_category: correct,
      category_event_at: watermark,
      updated_at: at,
    });
    return { outcome: "applied", subject, event: `IMPENDING ${correct}` };
  }
  if (!isTemplateCategory(next)) {
    return { outcome: "unreadable", subject, note: `category "${next}"` };
  }
  await updateTemplate(change, template, {
    category: next,
    previous_category: str(v.previous_category)?.toUpperCase() ??
      template.category,
    correct_category: null,
    category_event_at: watermark,
    updated_at: at,
  });
  return { outcome: "applied", subject, event: next };
}

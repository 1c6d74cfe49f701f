/**
 * Writing what Meta returned for a WABA's templates (template_sync_service.ts
 * fetches it): in place, taking over hand-made ones, disabling the missing.
 * A plan (src/db/planned_writes.ts): it reads the rows, decides, and records
 * the writes, guarded on the rows it read (on libSQL the writes go in one
 * batch after the reads: another writer may have moved a row meanwhile).
 */
import type { Executor, TemplatesTable } from "../../db/schema.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import type { Logger } from "../../log.ts";
import { newId } from "../../ids.ts";
import { toJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { wakeHeld } from "../../jobs/queue.ts";
import type { MetaTemplate } from "../../upstream/meta_management.ts";
import { updateWaba } from "../wabas/waba_repo.ts";
import type { TemplateStatus } from "./template.ts";
import {
  normalizeLanguage,
  readMetaTemplate,
  type SyncedTemplate,
} from "./template_meta.ts";
import * as repo from "./template_sync_repo.ts";

/** The hold key of the sends waiting on a template (HoldJob). */
export function templateHoldKey(templateId: string): string {
  return `template:${templateId}`;
}

/** What a sync did. */
export interface SyncSummary {
  wabaId: string;
  /** Templates Meta returned (and were read). */
  templates: number;
  pages: number;
  created: number;
  updated: number;
  /** No longer returned by Meta: now disabled. */
  disabled: number;
  approved: number;
  /** Templates Meta returned that could not be read (logged). */
  skipped: number;
}

/** Which stored templates a fetch speaks for: those it does not return are disabled. */
export type Scope =
  | { kind: "all" }
  | { kind: "names"; names: string[] }
  | { kind: "ids"; ids: string[] };

function inScope(row: TemplatesTable, scope: Scope): boolean {
  return scope.kind === "all" ||
    (scope.kind === "names" && scope.names.includes(row.name)) ||
    (scope.kind === "ids" && row.meta_template_id !== null &&
      scope.ids.includes(row.meta_template_id));
}

function keyOf(name: string, language: string): string {
  return `${name}\u0000${language}`;
}

/** The columns a synced template sets from Meta's object. */
function syncedColumns(t: SyncedTemplate) {
  return {
    meta_template_id: t.metaTemplateId,
    category: t.category,
    status: t.status,
    meta_status: t.metaStatus,
    components: toJson(t.components),
    parameter_format: t.parameterFormat,
    quality_score: t.qualityScore,
    rejected_reason: t.rejectedReason,
    previous_category: t.previousCategory,
    correct_category: t.correctCategory,
  };
}

/** The columns of `next` that differ from `row`. */
function changed(
  row: TemplatesTable,
  next: ReturnType<typeof syncedColumns>,
): Partial<TemplatesTable> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(next)) {
    if ((row as unknown as Record<string, unknown>)[k] !== v) out[k] = v;
  }
  return out as Partial<TemplatesTable>;
}

/**
 * Plans the writes of what Meta returned for the WABA: each template
 * updated in place (only what changed), taken over from a hand-made one, or
 * inserted; those of the scope Meta did not return disabled. Sends held on a
 * template that became approved again are woken. Reads on `db`, writes on
 * `writes`, guarded: the WABA has the rows read (none added) and every row
 * written is as read.
 */
export async function applyTemplates(
  db: Executor,
  writes: PlannedWrites,
  log: Logger,
  input: {
    wabaId: string;
    accountId: string;
    fetched: MetaTemplate[];
    scope: Scope;
    now: Date;
  },
): Promise<Omit<SyncSummary, "pages">> {
  const at = toDbTime(input.now);
  const { wabaId, scope } = input;
  const rows = await repo.listWabaTemplateRows(db, wabaId);
  const byKey = new Map(rows.map((r) => [keyOf(r.name, r.language), r]));
  const replaceable = await repo.listReplaceableRows(db, {
    accountId: input.accountId,
    wabaId,
  });
  const write = writes.db;
  // Templates are never deleted: the same count is the same rows. A row
  // added meanwhile (another sync's) would be inserted twice, or left out
  // of the disabled ones.
  writes.expectRow(repo.sameWabaTemplateCount(wabaId, rows.length));
  const unchangedSince = (row: TemplatesTable) =>
    writes.expectRow(repo.sameTemplateRow(row));
  const summary = {
    wabaId,
    templates: 0,
    created: 0,
    updated: 0,
    disabled: 0,
    approved: 0,
    skipped: 0,
  };
  const seen = new Set<string>();
  const unchanged: string[] = [];
  const woken: string[] = [];
  const becameApproved = (from: string | null, to: TemplateStatus) =>
    to === "approved" && from !== "approved";
  for (const raw of input.fetched) {
    const language = typeof raw.language === "string"
      ? normalizeLanguage(raw.language)
      : "";
    const previous = byKey.get(keyOf(String(raw.name ?? ""), language));
    const read = readMetaTemplate(
      raw,
      previous
        ? {
          status: previous.status as TemplateStatus,
          category: previous.category as SyncedTemplate["category"],
        }
        : undefined,
    );
    if ("problem" in read) {
      summary.skipped++;
      log.warn("Skipping a template Meta returned", {
        wabaId,
        id: String(raw.id ?? ""),
        problem: read.problem,
      });
      continue;
    }
    const key = keyOf(read.name, read.language);
    if (seen.has(key)) continue;
    seen.add(key);
    summary.templates++;
    if (read.status === "approved") summary.approved++;
    const columns = syncedColumns(read);
    // FLAGGED keeps the status; the flag is recorded once.
    const flagged = read.metaStatus === "FLAGGED" ? { flagged_at: at } : {};
    if (previous) {
      const patch: Partial<TemplatesTable> = {
        ...changed(previous, columns),
        ...(previous.flagged_at ? {} : flagged),
      };
      if (Object.keys(patch).length > 0) {
        unchangedSince(previous);
        await repo.updateTemplateRow(write, previous.id, {
          ...patch,
          synced_at: at,
          updated_at: at,
        });
        summary.updated++;
        if (becameApproved(previous.status, read.status)) {
          woken.push(previous.id);
        }
      } else unchanged.push(previous.id);
      continue;
    }
    const takeover = replaceable.findIndex((r) =>
      r.name === read.name && r.language === read.language
    );
    if (takeover >= 0) {
      const local = replaceable.splice(takeover, 1)[0]!;
      unchangedSince(local);
      await repo.updateTemplateRow(write, local.id, {
        ...columns,
        ...flagged,
        waba_id: wabaId,
        channel_id: null,
        source: "meta",
        synced_at: at,
        updated_at: at,
      });
      summary.updated++;
      if (becameApproved(local.status, read.status)) woken.push(local.id);
      continue;
    }
    await repo.insertTemplateRow(write, {
      id: newId(input.now.getTime()),
      account_id: input.accountId,
      channel_id: null,
      name: read.name,
      language: read.language,
      created_at: at,
      updated_at: at,
      waba_id: wabaId,
      source: "meta",
      ...columns,
      flagged_at: flagged.flagged_at ?? null,
      synced_at: at,
      status_event_at: null,
      quality_event_at: null,
      category_event_at: null,
      refresh_requested_at: null,
    });
    summary.created++;
  }
  for (const row of rows) {
    if (seen.has(keyOf(row.name, row.language)) || !inScope(row, scope)) {
      continue;
    }
    if (row.status === "disabled" && row.meta_status === "DELETED") continue;
    // Gone from Meta: kept (messages name it), never sendable again.
    unchangedSince(row);
    await repo.updateTemplateRow(write, row.id, {
      status: "disabled",
      meta_status: "DELETED",
      synced_at: at,
      updated_at: at,
    });
    summary.disabled++;
  }
  await repo.markSeen(write, { wabaId, ids: unchanged, at });
  if (scope.kind === "all") {
    await updateWaba(write, wabaId, {
      templates_synced_at: at,
      templates_sync_attempted_at: at,
      templates_sync_error: null,
      updated_at: at,
    });
  }
  for (const id of woken) await wakeHeld(write, templateHoldKey(id), input.now);
  return summary;
}

/**
 * Templates synced from Meta (issue 28): a WABA's whole list, paged on
 * `paging.cursors.after` while Meta names a `next`, written all or nothing
 * (a page that fails writes nothing: the previous templates stay as they
 * were); one template refreshed by name or by Meta's id. Templates are
 * keyed by (WABA, name, language) with ids stable across syncs; a synced
 * template takes over a hand-made one of the same name and language; one
 * Meta no longer returns becomes disabled (kept: messages name it), never
 * deleted. A template that becomes approved again wakes the sends held on it.
 */
import type { Logger } from "../../log.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import { AppError } from "../../errors.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import { enqueue, hasOpenJob } from "../../jobs/queue.ts";
import { UpstreamError } from "../../upstream/graph_api.ts";
import type { MetaTemplate } from "../../upstream/meta_management.ts";
import {
  type CallMode,
  describeMetaError,
  wabaCall,
  type WabaDeps,
  wabaToken,
} from "../wabas/waba_call_service.ts";
import {
  findWaba,
  listWabasDueForSync,
  updateWaba,
} from "../wabas/waba_repo.ts";
import { applyTemplates, type SyncSummary } from "./template_store_service.ts";

export { type SyncSummary, templateHoldKey } from "./template_store_service.ts";

/** Meta's largest page of templates (its default is 25: Chatwoot showed only those). */
export const TEMPLATE_PAGE_SIZE = 100;
/** A WABA whose sync failed is tried again by the cron after this long. */
const RETRY_AFTER_FAILURE_MS = 60 * 60_000;
/** Pages read at most in one sync: 6,000 templates (Meta's cap per WABA) are 60. */
const MAX_PAGES = 200;

export interface TemplateSyncDeps extends WabaDeps {
  log: Logger;
  /** Writes a sync's templates atomically (one batch on libSQL). */
  commits: Pick<GroupCommit, "runPlanned">;
}

/**
 * Writes what a fetch returned, atomically (one batch on libSQL, read again
 * when another writer moved the WABA's templates meanwhile).
 */
function applyPlanned(
  deps: TemplateSyncDeps,
  input: Parameters<typeof applyTemplates>[3],
): Promise<Omit<SyncSummary, "pages">> {
  return deps.commits.runPlanned(async (db, writes) => {
    const summary = await applyTemplates(db, writes, deps.log, input);
    return () => summary;
  });
}

/** Every page of the WABA's templates (`name` filters), or the first failure. */
async function fetchTemplates(
  deps: TemplateSyncDeps,
  input: { wabaId: string; mode: CallMode; name?: string },
): Promise<{ templates: MetaTemplate[]; pages: number }> {
  const token = await wabaToken(deps, input.wabaId);
  const templates: MetaTemplate[] = [];
  const seenCursors = new Set<string>();
  let after: string | null = null;
  let pages = 0;
  do {
    if (pages >= MAX_PAGES) {
      throw new AppError(
        "UPSTREAM_ERROR",
        `Cannot sync templates of WhatsApp Business Account "${input.wabaId}": Meta kept naming a next page after ${MAX_PAGES} pages`,
      );
    }
    const page = await wabaCall(
      deps,
      input,
      () =>
        deps.meta.listTemplates(token, input.wabaId, {
          limit: TEMPLATE_PAGE_SIZE,
          after,
          ...(input.name ? { name: input.name } : {}),
        }),
    );
    pages++;
    templates.push(...page.templates);
    after = page.after;
    if (after !== null) {
      if (seenCursors.has(after)) {
        throw new AppError(
          "UPSTREAM_ERROR",
          `Cannot sync templates of WhatsApp Business Account "${input.wabaId}": Meta named the same page cursor twice`,
        );
      }
      seenCursors.add(after);
    }
  } while (after !== null);
  return { templates, pages };
}

/**
 * Syncs the WABA's templates from Meta: every page, then one atomic write.
 * A failing page writes nothing but the failure on the WABA (shown by
 * `doctor`), and is thrown with Meta's code.
 */
export async function syncWabaTemplates(
  deps: TemplateSyncDeps,
  wabaId: string,
  opts: { mode: CallMode },
): Promise<SyncSummary> {
  const waba = await findWaba(deps.db, wabaId);
  if (!waba) {
    throw new AppError(
      "NOT_FOUND",
      `Cannot find WhatsApp Business Account "${wabaId}"`,
    );
  }
  let fetched: { templates: MetaTemplate[]; pages: number };
  try {
    fetched = await fetchTemplates(deps, { wabaId, mode: opts.mode });
  } catch (err) {
    const at = toDbTime(deps.clock.now());
    await updateWaba(deps.db, wabaId, {
      templates_sync_attempted_at: at,
      templates_sync_error: describeMetaError(err),
      updated_at: at,
    });
    throw err;
  }
  const now = deps.clock.now();
  const summary = await applyPlanned(deps, {
    wabaId,
    accountId: waba.accountId,
    fetched: fetched.templates,
    scope: { kind: "all" },
    now,
  });
  return { ...summary, pages: fetched.pages };
}

/**
 * Reads one template again (a management webhook named it, or a send of it
 * failed with a template error): by Meta's id, else every language of its
 * name. A template Meta no longer has (error 100) becomes disabled.
 */
export async function refreshTemplate(
  deps: TemplateSyncDeps,
  input: {
    wabaId: string;
    name?: string | undefined;
    metaTemplateId?: string | undefined;
    mode: CallMode;
  },
): Promise<SyncSummary> {
  const waba = await findWaba(deps.db, input.wabaId);
  if (!waba) {
    throw new AppError(
      "NOT_FOUND",
      `Cannot find WhatsApp Business Account "${input.wabaId}"`,
    );
  }
  const base = { wabaId: input.wabaId, accountId: waba.accountId };
  if (input.metaTemplateId) {
    const token = await wabaToken(deps, input.wabaId);
    const id = input.metaTemplateId;
    let raw: MetaTemplate | null;
    try {
      raw = await wabaCall(
        deps,
        { wabaId: input.wabaId, mode: input.mode },
        () => deps.meta.getTemplate(token, id),
      );
    } catch (err) {
      if (!(err instanceof UpstreamError && err.upstreamCode === 100)) {
        throw err;
      }
      raw = null;
    }
    const now = deps.clock.now();
    const summary = await applyPlanned(deps, {
      ...base,
      fetched: raw ? [raw] : [],
      scope: { kind: "ids", ids: [id] },
      now,
    });
    return { ...summary, pages: 1 };
  }
  const name = input.name;
  if (!name) {
    throw new AppError(
      "VALIDATION_ERROR",
      "Cannot refresh a template without its name or Meta id",
    );
  }
  const fetched = await fetchTemplates(deps, {
    wabaId: input.wabaId,
    mode: input.mode,
    name,
  });
  const now = deps.clock.now();
  // Meta's name filter matches parts of names too: only this name counts.
  const exact = fetched.templates.filter((t) => t.name === name);
  const summary = await applyPlanned(deps, {
    ...base,
    fetched: exact,
    scope: { kind: "names", names: [name] },
    now,
  });
  return { ...summary, pages: fetched.pages };
}

/**
 * The cron tick's job: queues a sync of every WABA (with a channel) whose
 * last sync is older than `intervalMs` and whose last attempt is older than
 * an hour (or the interval, if shorter), unless one is queued or running.
 */
export async function queueDueSyncs(
  deps: Pick<TemplateSyncDeps, "db" | "clock">,
  input: { tickKey: string; intervalMs: number },
): Promise<number> {
  const now = deps.clock.now();
  const due = await listWabasDueForSync(deps.db, {
    syncedBefore: toDbTime(addMs(now, -input.intervalMs)),
    attemptedBefore: toDbTime(
      addMs(now, -Math.min(input.intervalMs, RETRY_AFTER_FAILURE_MS)),
    ),
  });
  let queued = 0;
  for (const wabaId of due) {
    const prefix = `templates.sync:${wabaId}:`;
    if (
      await hasOpenJob(deps.db, { kind: "templates.sync", keyPrefix: prefix })
    ) {
      continue;
    }
    const id = await enqueue(deps.db, {
      kind: "templates.sync",
      payload: { wabaId },
      uniqueKey: `${prefix}${input.tickKey}`,
    }, now);
    if (id) queued++;
  }
  return queued;
}

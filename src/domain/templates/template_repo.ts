import { type ExpressionBuilder, type SelectQueryBuilder, sql } from "kysely";
import type { Database, Executor, TemplatesTable } from "../../db/schema.ts";
import { fromJson, toJson } from "../../db/json.ts";
import type {
  ParameterFormat,
  Template,
  TemplateCategory,
  TemplateComponent,
  TemplateSource,
  TemplateStatus,
} from "./template.ts";

export function toTemplate(r: TemplatesTable): Template {
  return {
    id: r.id,
    accountId: r.account_id,
    channelId: r.channel_id,
    metaTemplateId: r.meta_template_id,
    name: r.name,
    language: r.language,
    category: r.category as TemplateCategory,
    status: r.status as TemplateStatus,
    components: fromJson<TemplateComponent[]>(r.components, []),
    createdAt: r.created_at,
    wabaId: r.waba_id,
    source: r.source as TemplateSource,
    metaStatus: r.meta_status,
    parameterFormat: r.parameter_format as ParameterFormat | null,
    qualityScore: r.quality_score,
    rejectedReason: r.rejected_reason,
    previousCategory: r.previous_category,
    correctCategory: r.correct_category,
    flaggedAt: r.flagged_at,
    syncedAt: r.synced_at,
  };
}

/** The columns of a template that only a sync or Meta's webhooks fill in. */
export const UNSYNCED_TEMPLATE = {
  waba_id: null,
  meta_status: null,
  parameter_format: null,
  quality_score: null,
  rejected_reason: null,
  previous_category: null,
  correct_category: null,
  flagged_at: null,
  synced_at: null,
  status_event_at: null,
  quality_event_at: null,
  category_event_at: null,
  refresh_requested_at: null,
} as const;

/** What a hand-made template is given; the rest is Meta's to fill in. */
export type LocalTemplate = Pick<
  Template,
  | "id"
  | "accountId"
  | "channelId"
  | "metaTemplateId"
  | "name"
  | "language"
  | "category"
  | "status"
  | "components"
  | "createdAt"
>;

/** Stores a hand-made template (source "local"). */
export async function insertTemplate(
  db: Executor,
  t: LocalTemplate,
): Promise<Template> {
  const row: TemplatesTable = {
    ...UNSYNCED_TEMPLATE,
    source: "local",
    id: t.id,
    account_id: t.accountId,
    channel_id: t.channelId,
    meta_template_id: t.metaTemplateId,
    name: t.name,
    language: t.language,
    category: t.category,
    status: t.status,
    components: toJson(t.components),
    created_at: t.createdAt,
    updated_at: t.createdAt,
  };
  await db.insertInto("templates").values(row).execute();
  return toTemplate(row);
}

/** Finds a template of an account; another account's id is not found. */
export async function findTemplate(
  db: Executor,
  accountId: string,
  id: string,
): Promise<Template | undefined> {
  const r = await db.selectFrom("templates").selectAll()
    .where("account_id", "=", accountId).where("id", "=", id)
    .executeTakeFirst();
  return r ? toTemplate(r) : undefined;
}

export async function findTemplateById(
  db: Executor,
  id: string,
): Promise<Template | undefined> {
  const r = await db.selectFrom("templates").selectAll().where("id", "=", id)
    .executeTakeFirst();
  return r ? toTemplate(r) : undefined;
}

export async function setTemplateStatus(
  db: Executor,
  id: string,
  change: { status: TemplateStatus; updatedAt: string },
): Promise<boolean> {
  const r = await db.updateTable("templates")
    .set({ status: change.status, updated_at: change.updatedAt })
    .where("id", "=", id).executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}

/** The channel whose sendable templates a query wants: its own, the global local ones and its WABA's. */
export interface ChannelScope {
  id: string;
  /** null when the channel is unknown: its id, the global local ones only. */
  wabaId: string | null;
}

export interface TemplateFilter {
  accountId: string;
  /** What this channel can send. */
  channel?: ChannelScope | undefined;
  status?: TemplateStatus | undefined;
}

/**
 * What a channel can send: its own templates, the account's global local
 * ones, and its WABA's synced ones (a WABA's templates belong to every one
 * of its numbers, and to no other WABA's).
 */
function sendableOn(
  eb: ExpressionBuilder<Database, "templates">,
  channel: ChannelScope,
) {
  const global = eb.and([
    eb("channel_id", "is", null),
    channel.wabaId === null
      ? eb("waba_id", "is", null)
      : eb.or([eb("waba_id", "is", null), eb("waba_id", "=", channel.wabaId)]),
  ]);
  return eb.or([eb("channel_id", "=", channel.id), global]);
}

/** The filtered list query without columns or order (shared by rows, count and the plan test). */
export function templateListQuery(
  db: Executor,
  filter: TemplateFilter,
): SelectQueryBuilder<Database, "templates", object> {
  let q = db.selectFrom("templates").where(
    "account_id",
    "=",
    filter.accountId,
  );
  const channel = filter.channel;
  if (channel) q = q.where((eb) => sendableOn(eb, channel));
  if (filter.status) q = q.where("status", "=", filter.status);
  return q;
}

/** The page query exactly as the list endpoint runs it (the plan test checks its index). */
export function templatePageQuery(
  db: Executor,
  filter: TemplateFilter & { limit: number; offset: number },
) {
  return templateListQuery(db, filter).selectAll()
    .orderBy("created_at", "desc").orderBy("id", "desc")
    .limit(filter.limit).offset(filter.offset);
}

/** One page of templates, newest first (created_at, then id), plus the total count. */
export async function listTemplates(
  db: Executor,
  filter: TemplateFilter & { limit: number; offset: number },
): Promise<{ items: Template[]; total: number }> {
  const rows = await templatePageQuery(db, filter).execute();
  const count = await templateListQuery(db, filter)
    .select((eb) => eb.fn.countAll().as("n"))
    .executeTakeFirstOrThrow();
  return { items: rows.map(toTemplate), total: Number(count.n) };
}

export interface TemplateNameQuery {
  accountId: string;
  name: string;
  language?: string | undefined;
  /** Only what this channel can send, its own templates before global ones. */
  channel?: ChannelScope | undefined;
  /** Rank approved templates before any other status. */
  preferApproved?: boolean;
}

/**
 * The most recent template of a name (and language), ranked as the query
 * asks. A synced template ranks first of all: Meta's word on it (paused,
 * disabled) is never hidden by a hand-made one of the same name.
 */
export async function findTemplateByName(
  db: Executor,
  query: TemplateNameQuery,
): Promise<Template | undefined> {
  let q = db.selectFrom("templates").selectAll()
    .where("account_id", "=", query.accountId)
    .where("name", "=", query.name);
  if (query.language) q = q.where("language", "=", query.language);
  const channel = query.channel;
  if (channel) q = q.where((eb) => sendableOn(eb, channel));
  q = q.orderBy(sql`waba_id is null`, "asc");
  if (query.preferApproved) {
    q = q.orderBy(sql`status = 'approved'`, "desc");
  }
  if (channel) q = q.orderBy(sql`channel_id is null`, "asc");
  const r = await q.orderBy("created_at", "desc").orderBy("id", "desc")
    .limit(1).executeTakeFirst();
  return r ? toTemplate(r) : undefined;
}

/** How many of a WABA's templates are approved (doctor). */
export async function countApprovedTemplates(
  db: Executor,
  wabaId: string,
): Promise<number> {
  const r = await db.selectFrom("templates")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("waba_id", "=", wabaId).where("status", "=", "approved")
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

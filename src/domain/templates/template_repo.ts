import { type SelectQueryBuilder, sql } from "kysely";
import type { Database, Executor, TemplatesTable } from "../../db/schema.ts";
import { fromJson, toJson } from "../../db/json.ts";
import type {
  Template,
  TemplateCategory,
  TemplateComponent,
  TemplateStatus,
} from "./template.ts";

function toTemplate(r: TemplatesTable): Template {
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
  };
}

export async function insertTemplate(
  db: Executor,
  t: Template,
): Promise<Template> {
  const row: TemplatesTable = {
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

export interface TemplateFilter {
  accountId: string;
  /** Templates of this channel plus the global ones. */
  channelId?: string | undefined;
  status?: TemplateStatus | undefined;
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
  const channelId = filter.channelId;
  if (channelId) {
    q = q.where((eb) =>
      eb.or([eb("channel_id", "=", channelId), eb("channel_id", "is", null)])
    );
  }
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
  /** Only this channel's templates and global ones, the channel's first. */
  channelId?: string | undefined;
  /** Rank approved templates before any other status. */
  preferApproved?: boolean;
}

/** The most recent template of a name (and language), ranked as the query asks. */
export async function findTemplateByName(
  db: Executor,
  query: TemplateNameQuery,
): Promise<Template | undefined> {
  let q = db.selectFrom("templates").selectAll()
    .where("account_id", "=", query.accountId)
    .where("name", "=", query.name);
  if (query.language) q = q.where("language", "=", query.language);
  const channelId = query.channelId;
  if (channelId) {
    q = q.where((eb) =>
      eb.or([eb("channel_id", "=", channelId), eb("channel_id", "is", null)])
    );
  }
  if (query.preferApproved) {
    q = q.orderBy(sql`status = 'approved'`, "desc");
  }
  if (channelId) q = q.orderBy(sql`channel_id is null`, "asc");
  const r = await q.orderBy("created_at", "desc").orderBy("id", "desc")
    .limit(1).executeTakeFirst();
  return r ? toTemplate(r) : undefined;
}

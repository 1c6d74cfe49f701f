import type { Db, Executor } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import { AppError } from "../../errors.ts";
import { newId } from "../../ids.ts";
import { toDbTime } from "../../db/time.ts";
import type { PageResult } from "../pagination.ts";
import { findChannel } from "../channels/channel_repo.ts";
import {
  checkTemplateFields,
  isTemplateStatus,
  type Template,
  TEMPLATE_STATUSES,
  type TemplateStatus,
} from "./template.ts";
import * as repo from "./template_repo.ts";

export interface Deps {
  db: Db;
  clock: Clock;
}

export interface NewTemplate {
  accountId: string;
  /** A channel of the account, or null/absent for a global template. */
  channelId?: string | null | undefined;
  name: string;
  language: string;
  category: string;
  status: string;
  /** Array of objects, each with `type` HEADER, BODY, FOOTER or BUTTONS. */
  components: unknown;
  metaTemplateId?: string | null | undefined;
}

export interface TemplateListQuery {
  accountId: string;
  page: number;
  pageSize: number;
  /** Templates of this channel plus the global ones. */
  channelId?: string | undefined;
  status?: TemplateStatus | undefined;
}

/** Creates a template (admin CLI, dev seed); templates are not created through the public API. */
export async function createTemplate(
  deps: Deps,
  input: NewTemplate,
): Promise<Template> {
  checkTemplateFields(input);
  const channelId = input.channelId ?? null;
  if (channelId && !(await findChannel(deps.db, input.accountId, channelId))) {
    throw new AppError(
      "INVALID_CHANNEL",
      `Cannot save template: channel "${channelId}" is not a channel of account "${input.accountId}"`,
    );
  }
  return await repo.insertTemplate(deps.db, {
    id: newId(),
    accountId: input.accountId,
    channelId,
    metaTemplateId: input.metaTemplateId ?? null,
    name: input.name,
    language: input.language,
    category: input.category as Template["category"],
    status: input.status as TemplateStatus,
    components: input.components as Template["components"],
    createdAt: toDbTime(deps.clock.now()),
  });
}

/** Sets a template's status (admin CLI; the upstream platform decides approval). */
export async function updateTemplateStatus(
  deps: Deps,
  id: string,
  status: string,
): Promise<Template> {
  if (!isTemplateStatus(status)) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Cannot update template: status "${status}" must be one of ${
        TEMPLATE_STATUSES.join(", ")
      }`,
    );
  }
  const done = await repo.setTemplateStatus(deps.db, id, {
    status,
    updatedAt: toDbTime(deps.clock.now()),
  });
  if (!done) throw new AppError("NOT_FOUND", `Cannot find template "${id}"`);
  return (await repo.findTemplateById(deps.db, id))!;
}

/**
 * The scope of what a channel of the account can send; a channel id the
 * account does not have gets its own id (which matches nothing) and the
 * global local templates, as before templates had a WABA.
 */
async function channelScope(
  db: Executor,
  accountId: string,
  channelId: string | undefined,
): Promise<repo.ChannelScope | undefined> {
  if (!channelId) return undefined;
  const channel = await findChannel(db, accountId, channelId);
  return { id: channelId, wabaId: channel?.wabaId ?? null };
}

/** One page of the account's templates, newest first (with a channel: what it can send). */
export async function listTemplates(
  deps: { db: Db },
  query: TemplateListQuery,
): Promise<PageResult<Template>> {
  const { items, total } = await repo.listTemplates(deps.db, {
    accountId: query.accountId,
    channel: await channelScope(deps.db, query.accountId, query.channelId),
    status: query.status,
    limit: query.pageSize,
    offset: (query.page - 1) * query.pageSize,
  });
  return { items, page: query.page, pageSize: query.pageSize, total };
}

/** A template of the account, or NOT_FOUND (also for another account's id). */
export async function getTemplate(
  deps: { db: Db },
  ref: { accountId: string; id: string },
): Promise<Template> {
  const found = await repo.findTemplate(deps.db, ref.accountId, ref.id);
  if (!found) {
    throw new AppError("NOT_FOUND", `Cannot find template "${ref.id}"`);
  }
  return found;
}

/**
 * The most recent template of a name, optionally of a language and of a
 * channel (that channel's own templates win over global ones), or NOT_FOUND.
 */
export async function getTemplateByName(
  deps: { db: Db },
  query: {
    accountId: string;
    name: string;
    language?: string | undefined;
    channelId?: string | undefined;
  },
): Promise<Template> {
  const found = await repo.findTemplateByName(deps.db, {
    accountId: query.accountId,
    name: query.name,
    language: query.language,
    channel: await channelScope(deps.db, query.accountId, query.channelId),
  });
  if (!found) {
    throw new AppError(
      "NOT_FOUND",
      `Cannot find template "${query.name}"${
        query.language ? ` in language "${query.language}"` : ""
      }`,
    );
  }
  return found;
}

/**
 * The template a send of `name` + `language` on a channel would use: its
 * WABA's synced one when there is one (whatever Meta says of it), else an
 * approved one if any (the channel's own before global, then most recent),
 * else the best non-approved match so the caller can say why it cannot be
 * sent; undefined when no template of that name and language exists.
 */
export async function findSendableTemplate(
  db: Executor,
  query: {
    accountId: string;
    channel: { id: string; wabaId: string };
    name: string;
    language: string;
  },
): Promise<Template | undefined> {
  return await repo.findTemplateByName(db, {
    accountId: query.accountId,
    name: query.name,
    language: query.language,
    channel: query.channel,
    preferApproved: true,
  });
}

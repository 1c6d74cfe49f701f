/**
 * A queued template send and its template as Meta has it now: a send whose
 * template Meta paused since it was accepted waits for it (HoldJob), one
 * whose template Meta disabled fails at once, and a send Meta refused with a
 * template error has the template read again.
 */
import type { Db, Executor, MessagesTable } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import type { LookupCache } from "../../db/lookup_cache.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import { AppError, HoldJob } from "../../errors.ts";
import { fromJson } from "../../db/json.ts";
import { findChannelById } from "../channels/channel_repo.ts";
import type { Channel } from "../channels/channel.ts";
import type { Template } from "../templates/template.ts";
import { findSendableTemplate } from "../templates/template_service.ts";
import { templateHoldKey } from "../templates/template_store_service.ts";
import { requestTemplateRefresh } from "../templates/template_refresh_service.ts";

export interface QueuedTemplateDeps {
  db: Db;
  clock: Clock;
  lookups?: LookupCache | undefined;
}

/** What a template message's stored content names. */
interface TemplateContent {
  name?: string;
  language?: { code?: string };
}

/** A queued send of a paused template is looked at again after this long (or when it is approved). */
export const TEMPLATE_RECHECK_MS = 15 * 60_000;
/** A queued send waits this long for its paused template, then fails. */
export const TEMPLATE_HOLD_LIMIT_MS = 24 * 60 * 60_000;

/**
 * The template a queued send names, as it is now (through the lookup cache:
 * see below), or undefined when there is none.
 */
async function currentTemplate(
  deps: Pick<QueuedTemplateDeps, "db" | "lookups">,
  query: {
    accountId: string;
    channel: Channel;
    name: string;
    language: string;
  },
): Promise<Template | undefined> {
  const load = () =>
    findSendableTemplate(deps.db, {
      accountId: query.accountId,
      channel: { id: query.channel.id, wabaId: query.channel.wabaId },
      name: query.name,
      language: query.language,
    });
  if (!deps.lookups) return await load();
  // Embedded SQLite: the channel was read through the cache just before,
  // after its refresh, so no second read of the epoch. libSQL: the
  // admission's cache, as stale as it may be there (CACHE_TTL_MS): a
  // template paused within it is refused by Meta (132015), and that send
  // waits all the same (holdForMetaPause). The admission's key: the same
  // question, the same answer.
  if (!deps.lookups.exact) await deps.lookups.refresh();
  return await deps.lookups.get(
    `template:${query.accountId}\u0000${query.channel.id}\u0000${query.name}\u0000${query.language}`,
    load,
  );
}

/**
 * A queued template send whose template Meta paused since it was accepted
 * (or sent back to review) waits for it without spending an attempt
 * (HoldJob: woken when the template is approved again), and fails with
 * TEMPLATE_NOT_APPROVED once it has waited TEMPLATE_HOLD_LIMIT_MS; one whose
 * template is disabled or rejected fails at once.
 */
export async function checkTemplateStill(
  deps: QueuedTemplateDeps,
  row: { account_id: string; content: string },
  channel: Channel,
  heldSince: string | null | undefined,
): Promise<void> {
  const content = fromJson<TemplateContent>(row.content, {});
  const name = content.name;
  const language = content.language?.code;
  if (!name || !language) return;
  const template = await currentTemplate(deps, {
    accountId: row.account_id,
    channel,
    name,
    language,
  });
  if (!template || template.status === "approved") return;
  const what = `template "${name}" (${language}) is ${template.status}${
    template.metaStatus ? ` (Meta: ${template.metaStatus})` : ""
  }`;
  if (template.status === "paused" || template.status === "pending") {
    throw holdOn(deps, template.id, { what, heldSince });
  }
  throw new AppError("TEMPLATE_NOT_APPROVED", `Not sent: ${what}`);
}

/** The job held on the template, or failed once it has waited TEMPLATE_HOLD_LIMIT_MS. */
function holdOn(
  deps: Pick<QueuedTemplateDeps, "clock">,
  templateId: string,
  input: { what: string; heldSince: string | null | undefined },
): Error {
  const now = deps.clock.now().getTime();
  const since = input.heldSince ? Date.parse(input.heldSince) : now;
  if (now - since >= TEMPLATE_HOLD_LIMIT_MS) {
    return new AppError(
      "TEMPLATE_NOT_APPROVED",
      `Not sent: ${input.what} and was not approved again within 24 h`,
    );
  }
  return new HoldJob(
    templateHoldKey(templateId),
    TEMPLATE_RECHECK_MS,
    `Waiting: ${input.what}`,
  );
}

/**
 * Meta answered a send 132015 (template paused) before its webhook told us:
 * the send waits for the template as if we had known (HoldJob), and the
 * template is read again (at most once per 5 minutes) so the next sends
 * are refused or held here without asking Meta. Undefined when the send
 * names no template we hold.
 */
export async function holdForMetaPause(
  deps: QueuedTemplateDeps & { commits: Pick<GroupCommit, "runPlanned"> },
  row: Pick<MessagesTable, "type" | "channel_id" | "content" | "account_id">,
  input: { channel: Channel; heldSince: string | null | undefined },
): Promise<Error | undefined> {
  const content = fromJson<TemplateContent>(row.content, {});
  const name = content.name;
  const language = content.language?.code;
  if (!name || !language) return undefined;
  const template = await currentTemplate(deps, {
    accountId: row.account_id,
    channel: input.channel,
    name,
    language,
  });
  if (!template) return undefined;
  const at = deps.clock.now();
  // The refresh request is a planned write (one batch on libSQL, no
  // interactive transaction): taken at most once per 5 minutes, with its job.
  await deps.commits.runPlanned(async (db, writes) => {
    await refreshTemplateOf(db, row, at, { writes });
    return () => undefined;
  });
  return holdOn(deps, template.id, {
    what: `template "${name}" (${language}) is paused (Meta: 132015)`,
    heldSince: input.heldSince,
  });
}

/**
 * Queues a refresh of the template a failed send named (in the caller's
 * transaction, or with `writes` as a plan's writes; at most one per template
 * per 5 minutes).
 */
export async function refreshTemplateOf(
  trx: Executor,
  message: Pick<
    MessagesTable,
    "type" | "channel_id" | "content" | "account_id"
  >,
  at: Date,
  options: { writes?: PlannedWrites } = {},
): Promise<void> {
  if (message.type !== "template" || !message.channel_id) return;
  const channel = await findChannelById(trx, message.channel_id);
  const content = fromJson<TemplateContent>(message.content, {});
  if (!channel || !content.name || !content.language?.code) return;
  await requestTemplateRefresh(trx, {
    accountId: message.account_id,
    channel,
    name: content.name,
    language: content.language.code,
    now: at,
    ...options,
  });
}

/**
 * A template refreshed after a send of it failed with a template error
 * (132001 not found in that language or not approved, 132000 parameter
 * count, 132012 parameter format: the template was likely edited or removed
 * at Meta; 132015/132016 paused or disabled), at most once per template per
 * REFRESH_WINDOW_MS, so a campaign of thousands of failing sends sets off
 * one refresh.
 */
import type { Executor } from "../../db/schema.ts";
import { addMs, toDbTime } from "../../db/time.ts";
import { enqueue } from "../../jobs/queue.ts";
import { findTemplateByName } from "./template_repo.ts";
import {
  refreshRequestedAt,
  refreshRequestUnchanged,
  takeRefreshRequest,
} from "./template_sync_repo.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";

/**
 * Meta's template errors after which the template is read again: the three
 * of an edited or removed template (issue 28), and paused (132015) or
 * disabled (132016), which Meta's webhook should have told us.
 */
export const REFRESH_CODES: ReadonlySet<number> = new Set([
  132000,
  132001,
  132012,
  132015,
  132016,
]);
/** At most one refresh per template in this long. */
export const REFRESH_WINDOW_MS = 5 * 60_000;

/** Whether an upstream error code calls for a refresh of the template sent. */
export function isRefreshCode(code: number | string | null | undefined) {
  return code !== null && code !== undefined && REFRESH_CODES.has(Number(code));
}

/**
 * Queues a refresh of the template a failed send used (by name, in the
 * channel's WABA), in the caller's transaction, unless one was queued in
 * the last REFRESH_WINDOW_MS; true when it queued one. With `writes` (a
 * plan's: src/db/planned_writes.ts), it reads on `trx` and records its
 * writes there, guarded on the last request it read.
 */
export async function requestTemplateRefresh(
  trx: Executor,
  input: {
    accountId: string;
    channel: { id: string; wabaId: string };
    name: string;
    language: string;
    now: Date;
    writes?: PlannedWrites;
  },
): Promise<boolean> {
  const template = await findTemplateByName(trx, {
    accountId: input.accountId,
    name: input.name,
    language: input.language,
    channel: input.channel,
    preferApproved: true,
  });
  if (!template) return false;
  const now = toDbTime(input.now);
  const take = {
    id: template.id,
    now,
    since: toDbTime(addMs(input.now, -REFRESH_WINDOW_MS)),
  };
  const { writes } = input;
  if (writes) {
    const at = await refreshRequestedAt(trx, template.id);
    if (at !== null && at > take.since) return false;
    writes.expectRow(refreshRequestUnchanged(template.id, at));
    await takeRefreshRequest(writes.db, take);
  } else if (!(await takeRefreshRequest(trx, take))) return false;
  await enqueue(writes?.db ?? trx, {
    kind: "template.refresh",
    payload: {
      wabaId: template.wabaId ?? input.channel.wabaId,
      name: template.name,
    },
    uniqueKey: `template.refresh:${template.id}:${now}`,
  }, input.now);
  return true;
}

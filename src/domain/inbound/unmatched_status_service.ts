// Status reports that match no message yet. Our own send may not have
// committed its upstream id, so each is tried again on its own for a
// bounded time; one for a message this server never sent (another tool on
// the same number, or before a migration) is then dropped with a log line.
import { parseJsonWithoutNul } from "../../text.ts";
import type { Db, Executor } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";
import { RetryLater } from "../../errors.ts";
import { enqueue } from "../../jobs/queue.ts";
import { findChannelByUpstreamId } from "../channels/channel_repo.ts";
import { applyStatus } from "./inbound_apply_service.ts";
import { findInboundPayload } from "./inbound_payload_repo.ts";
import { MetaPayload, MetaStatus, MetaValue } from "./meta_payload.ts";

export const STATUS_RETRY_JOB = "meta.status";

/** How long an unmatched status is tried again before it is dropped. */
export const UNMATCHED_WINDOW_MS = 10 * 60 * 1000;
const MIN_DELAY_MS = 2_000;
const MAX_DELAY_MS = 60_000;

interface Deps {
  db: Db;
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
  log: Logger;
}

/** Where a status sits in its stored payload: entry, change and status index. */
export interface StatusAt {
  payloadId: string;
  entry: number;
  change: number;
  status: number;
}

/** Queues one later try of one unmatched status, in the caller's transaction. */
export async function enqueueStatusRetry(
  trx: Executor,
  at: StatusAt,
  now: Date,
): Promise<void> {
  // Lane, attempts and unique key (one per status): JOB_KINDS["meta.status"].
  await enqueue(trx, {
    kind: STATUS_RETRY_JOB,
    payload: at,
    runAt: new Date(now.getTime() + MIN_DELAY_MS),
  }, now);
}

/** What a payload with `n` unmatched statuses keeps as its error. */
export function unmatchedNote(n: number): string {
  return `${n} status report(s) matched no message yet: each is tried again on its own, then dropped`;
}

/**
 * The wait before the next try grows with the report's age (2 s, 2 s, 4 s,
 * 8 s ... at most a minute), so a report that never matches costs about
 * twenty tries of one status, not the whole payload every 2 s.
 */
export function nextDelayMs(ageMs: number): number {
  return Math.min(MAX_DELAY_MS, Math.max(MIN_DELAY_MS, ageMs));
}

/** Tries one unmatched status again; drops it (with a log line) once the window is over. */
export async function retryUnmatchedStatus(
  deps: Deps,
  at: StatusAt,
): Promise<void> {
  const stored = await findInboundPayload(deps.db, at.payloadId);
  if (!stored) return;
  const payload = MetaPayload.parse(parseJsonWithoutNul(stored.body));
  const value = MetaValue.safeParse(
    payload.entry[at.entry]?.changes[at.change]?.value,
  );
  const status = MetaStatus.safeParse(
    value.success ? value.data.statuses?.[at.status] : undefined,
  );
  if (!value.success || !status.success) return;
  const channel = await findChannelByUpstreamId(
    deps.db,
    value.data.metadata.phone_number_id,
  );
  if (!channel || await applyStatus(deps, channel, status.data)) return;
  const age = deps.clock.now().getTime() - Date.parse(stored.receivedAt);
  if (age >= UNMATCHED_WINDOW_MS) {
    deps.log.warn("Dropping a status report that matches no message", {
      payloadId: at.payloadId,
      wamid: status.data.id,
      status: status.data.status,
    });
    return;
  }
  throw new RetryLater(
    nextDelayMs(age),
    `Cannot match status "${status.data.status}" of "${status.data.id}" to a message yet`,
  );
}

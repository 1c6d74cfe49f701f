/**
 * Status-only webhooks (most of Meta's traffic: sent, delivered and read for
 * every message) are applied in the request's own transaction, with the
 * stored payload marked processed: a few indexed writes per status, not a
 * stored payload, a job, its claim, a second read and its settlement. The
 * callbacks that arrive together share one transaction (GroupCommit), each in
 * its own savepoint: Meta sends three per message, and a commit of their
 * rows, events and deliveries costs more than the writes. The rank rule and
 * the unmatched-status retries (`meta.status`) are the job's own
 * (applyStatusIn, enqueueStatusRetry). Anything else in the payload, an
 * unknown phone number id or a failure sends it down the usual way.
 */
import type { Channel } from "../channels/channel.ts";
import { findChannelByUpstreamId } from "../channels/channel_repo.ts";
import { toDbTime } from "../../db/time.ts";
import { PRIORITY } from "../../jobs/queue.ts";
import { applyStatusIn } from "./inbound_apply_service.ts";
import { insertInboundPayload } from "./inbound_payload_repo.ts";
import { type MetaPayload, MetaStatus, MetaValue } from "./meta_payload.ts";
import {
  enqueueStatusRetry,
  type StatusAt,
  unmatchedNote,
} from "./unmatched_status_service.ts";
import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";

export interface StatusWebhookDeps {
  db: Db;
  /** Callbacks that arrive together commit in one transaction (GroupCommit). */
  commits: Pick<GroupCommit, "run">;
  clock: Clock;
  log: Logger;
  jobs: { notify(lanes?: Iterable<number>): void };
}

/** Callbacks gather this long for a shared commit (2 ms more before Meta gets its 200). */
const STATUS_GATHER = { gatherMs: 2 } as const;

interface StatusChange {
  entry: number;
  change: number;
  phoneNumberId: string;
  statuses: MetaStatus[];
}

/** The changes of a payload that carries statuses and nothing else, or null. */
export function statusOnly(payload: MetaPayload): StatusChange[] | null {
  const out: StatusChange[] = [];
  for (const [e, entry] of payload.entry.entries()) {
    for (const [c, change] of entry.changes.entries()) {
      if (change.field !== "messages") return null;
      const value = MetaValue.safeParse(change.value);
      if (!value.success) return null;
      const v = value.data;
      if (
        v.messages?.length || v.message_echoes?.length || v.errors?.length ||
        v.contacts?.length || !v.statuses?.length
      ) return null;
      const statuses: MetaStatus[] = [];
      for (const raw of v.statuses) {
        const status = MetaStatus.safeParse(raw);
        if (!status.success) return null;
        statuses.push(status.data);
      }
      out.push({
        entry: e,
        change: c,
        phoneNumberId: v.metadata.phone_number_id,
        statuses,
      });
    }
  }
  return out.length ? out : null;
}

/**
 * Stores a status-only payload processed and applies its statuses, in one
 * unit of a group commit (resolved once committed); false (nothing of it
 * written) when it must go down the usual way.
 */
export async function applyStatusWebhook(
  deps: StatusWebhookDeps,
  input: { id: string; text: string; now: Date; changes: StatusChange[] },
): Promise<boolean> {
  const { id, now } = input;
  const channels = new Map<string, Channel>();
  for (const { phoneNumberId } of input.changes) {
    if (channels.has(phoneNumberId)) continue;
    const channel = await findChannelByUpstreamId(deps.db, phoneNumberId);
    if (!channel) return false;
    channels.set(phoneNumberId, channel);
  }
  try {
    const unmatched = await deps.commits.run(async (trx) => {
      const unmatched: StatusAt[] = [];
      for (const change of input.changes) {
        const channel = channels.get(change.phoneNumberId)!;
        for (const [i, status] of change.statuses.entries()) {
          if (!await applyStatusIn(trx, deps, channel, status)) {
            unmatched.push({
              payloadId: id,
              entry: change.entry,
              change: change.change,
              status: i,
            });
          }
        }
      }
      for (const at of unmatched) await enqueueStatusRetry(trx, at, now);
      await insertInboundPayload(trx, {
        id,
        body: input.text,
        receivedAt: toDbTime(now),
        processedAt: toDbTime(now),
        error: unmatched.length ? unmatchedNote(unmatched.length) : null,
      });
      return unmatched.length;
    }, STATUS_GATHER);
    if (unmatched > 0) deps.jobs.notify([PRIORITY.inbound]);
    return true;
  } catch (err) {
    deps.log.warn("Cannot apply a status webhook at once; queueing it", {
      payloadId: id,
      err,
    });
    return false;
  }
}

/**
 * Status-only webhooks (most of Meta's traffic: sent, delivered and read for
 * every message) are applied in the request's own transaction, with the
 * stored payload marked processed: a few indexed writes per status, not a
 * stored payload, a job, its claim, a second read and its settlement. The
 * callbacks that arrive together are applied in one unit of a group commit
 * (RecordBatcher): Meta sends three per message, and a commit of their rows,
 * events and deliveries costs more than the writes, as do a statement per
 * callback for its channel, stored payload, subscriptions, deliveries and
 * jobs; a unit that fails is applied again one callback at a time. The rank rule and
 * the unmatched-status retries (`meta.status`) are the job's own
 * (planStatus, enqueueStatusRetry). Anything else in the payload, an
 * unknown phone number id or a failure sends it down the usual way.
 */
import type { Channel } from "../channels/channel.ts";
import { findChannelByUpstreamId } from "../channels/channel_repo.ts";
import { toDbTime } from "../../db/time.ts";
import { PRIORITY } from "../../jobs/queue.ts";
import { PlannedEvents } from "../events/event_service.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { batcherOf, RecordBatcher } from "../webhooks/record_batcher.ts";
import { planStatus, type StatusUnit } from "./status_plan_service.ts";
import { markWebhookVerified } from "../channels/channel_repo.ts";
import {
  insertInboundPayloads,
  type NewInboundPayload,
} from "./inbound_payload_repo.ts";
import { type MetaPayload, MetaStatus, MetaValue } from "./meta_payload.ts";
import {
  enqueueStatusRetry,
  type StatusAt,
  unmatchedNote,
} from "./unmatched_status_service.ts";
import type { Db, Executor } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { Logger } from "../../log.ts";

export interface StatusWebhookDeps {
  db: Db;
  /** Callbacks that arrive together are one atomic unit (GroupCommit.runPlanned). */
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
  log: Logger;
  jobs: { notify(lanes?: Iterable<number>): void };
}

/**
 * Callbacks gather this long for a shared commit when the writer is idle
 * (a busy writer takes them into its next group at once): up to 10 ms more
 * before Meta gets its 200. Meta sends three a message, each on its own: at
 * 80 messages a second in `deno task dev`, 2 ms gathered about 1.3
 * callbacks a transaction, and a transaction's begin, first read and commit
 * cost more than the callback's writes; 10 ms halved the commits (1,148 ->
 * 617 in 10 s, statements 25,250 -> 20,804; 5 ms cost 5-7 % more CPU per
 * message than 10). The price is paid by a sender that waits for each 200
 * before its next post on few connections: each post then waits out the
 * window (a callback profiler since removed, commit 94e249c; 4 at a time: 1.5 -> 3.6 ms a
 * callback), where Meta posts its callbacks as they happen.
 */
const STATUS_GATHER = { gatherMs: 10 } as const;

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

/** A status-only payload to apply. */
interface Callback {
  id: string;
  text: string;
  now: Date;
  changes: StatusChange[];
}

/** The writer of each group commit's callbacks (one per container). */
const writerOf = batcherOf((deps: StatusWebhookDeps) =>
  new RecordBatcher<Callback, number | null>(deps.commits, {
    plan: (db, writes, callbacks) => planCallbacks(db, writes, deps, callbacks),
  }, STATUS_GATHER)
);

/**
 * Stores a status-only payload processed and applies its statuses, with the
 * other callbacks that arrive together in one unit of a group commit
 * (resolved once committed); false (nothing of it written) when it must go
 * down the usual way.
 */
export async function applyStatusWebhook(
  deps: StatusWebhookDeps,
  input: Callback,
): Promise<boolean> {
  try {
    const unmatched = await writerOf(deps).add(input);
    if (unmatched === null) return false;
    if (unmatched > 0) deps.jobs.notify([PRIORITY.inbound]);
    return true;
  } catch (err) {
    deps.log.warn("Cannot apply a status webhook at once; queueing it", {
      payloadId: input.id,
      err,
    });
    return false;
  }
}

/**
 * Applies the callbacks of one unit, in arrival order (channels read once
 * per unit, then statuses and retries), then writes the events of them all
 * with their deliveries and jobs (PlannedEvents), and the stored payloads,
 * in one multi-row statement each, as planned writes: one write batch on
 * libSQL (a status that raced another writer fails its guard and the unit
 * is planned again), the group transaction on SQLite (a unit that fails is
 * written again one callback at a time: RecordBatcher).
 * Per callback, its count of unmatched statuses, or null when a phone number
 * id is unknown (nothing of it written: it goes down the job path).
 */
async function planCallbacks(
  db: Executor,
  writes: PlannedWrites,
  deps: StatusWebhookDeps,
  callbacks: Callback[],
): Promise<() => (number | null)[]> {
  const channels = new Map<string, Channel | undefined>();
  const unit: StatusUnit = { events: new PlannedEvents(), seen: new Map() };
  const payloads: NewInboundPayload[] = [];
  const out: (number | null)[] = [];
  for (const { id, text, now, changes } of callbacks) {
    for (const { phoneNumberId } of changes) {
      if (channels.has(phoneNumberId)) continue;
      channels.set(
        phoneNumberId,
        await findChannelByUpstreamId(db, phoneNumberId),
      );
    }
    if (changes.some((c) => !channels.get(c.phoneNumberId))) {
      out.push(null);
      continue;
    }
    // A signed post for the channel's WABA: its webhook works.
    const unverified = changes.map((c) => channels.get(c.phoneNumberId)!)
      .filter((ch) => !ch.webhookVerified);
    if (unverified.length) {
      await markWebhookVerified(
        db,
        unverified.map((ch) => ch.wabaId),
        writes.db,
      );
      for (const ch of unverified) {
        channels.set(ch.upstreamPhoneNumberId, {
          ...ch,
          webhookVerified: true,
        });
      }
    }
    const unmatched: StatusAt[] = [];
    for (const change of changes) {
      const channel = channels.get(change.phoneNumberId)!;
      for (const [i, status] of change.statuses.entries()) {
        if (!await planStatus(db, writes, deps, channel, status, unit)) {
          unmatched.push({
            payloadId: id,
            entry: change.entry,
            change: change.change,
            status: i,
          });
        }
      }
    }
    for (const at of unmatched) await enqueueStatusRetry(writes.db, at, now);
    payloads.push({
      id,
      body: text,
      receivedAt: toDbTime(now),
      processedAt: toDbTime(now),
      error: unmatched.length ? unmatchedNote(unmatched.length) : null,
    });
    out.push(unmatched.length);
  }
  await unit.events.flushPlanned(db, writes);
  await insertInboundPayloads(writes.db, payloads);
  return () => out;
}

import type { Executor, WebhookDeliveriesTable } from "../../db/schema.ts";
import { fromJson } from "../../db/json.ts";
import { newId } from "../../ids.ts";
import {
  type EnqueueInput,
  enqueueManyCompiled,
  ownedGroupKey,
  PRIORITY,
} from "../../jobs/queue.ts";
import { DELIVER_JOB, pendingRow } from "./delivery.ts";
import {
  insertDeliveries,
  pendingContactCreated,
  raiseChains,
} from "./delivery_repo.ts";
import { payloadHash } from "./envelope.ts";
import { subscribersOf } from "./webhook_repo.ts";

export { DELIVER_JOB } from "./delivery.ts";

/**
 * When an attempt that waits for its contact's contact.created first runs:
 * the end of that chain wakes it at once (runDependentsNow), so it is not claimed only
 * to be put back while the first is still on its way; this is the backstop.
 */
export const WAITING_BACKSTOP_MS = 30_000;

/**
 * The kinds delivered after their contact's contact.created (the spec's
 * events rule 3); the rest never wait, so a status change costs no lookup.
 */
const WAITS_FOR_CONTACT = new Set(["message.received", "conversation.created"]);

export interface FannedEvent {
  eventId: string;
  accountId: string;
  type: string;
  dataText: string;
  /** The contact the event is about (see subjectOf). */
  subjectId: string | null;
  createdAt: string;
  /** "batch": a campaign's event, delivered in the lane behind live chat's. */
  lane: "live" | "batch";
}

/** The job lane of an event's deliveries. */
const LANE_PRIORITY = {
  live: PRIORITY.webhook,
  batch: PRIORITY.webhookBatch,
} as const;

/**
 * The job of one pending attempt, grouped by subscription and owned by its
 * account (`<accountId>/<webhookId>`), so one slow endpoint keeps to its
 * share of its account's, and one account to its share of the pool.
 */
export function deliveryJob(
  row: Pick<WebhookDeliveriesTable, "id" | "webhook_id" | "account_id">,
  options: { runAt?: Date; priority?: number } = {},
): EnqueueInput<typeof DELIVER_JOB> {
  // Attempts and unique key: JOB_KINDS["webhook.deliver"].
  return {
    kind: DELIVER_JOB,
    payload: { deliveryId: row.id },
    priority: options.priority ?? PRIORITY.webhook,
    groupKey: ownedGroupKey(row.account_id, row.webhook_id),
    ...(options.runAt ? { runAt: options.runAt } : {}),
  };
}

/** An event to fan out and the time its deliveries' jobs are made at. */
export interface Fanning {
  event: FannedEvent;
  now: Date;
}

/**
 * Creates one delivery per subscription of the account that wants this event
 * kind, in the caller's transaction (the event's own), with the job of its
 * first attempt; a disabled subscription gets a `skipped` row instead (it can
 * be replayed). A message.received or conversation.created whose contact's
 * contact.created is still on its way to a subscription waits for it there;
 * no other kind waits. A batch event's jobs go in the lane behind live
 * ones'; a live event that waits for a contact.created of the batch lane
 * moves that chain up to its own lane, so it does not wait behind a campaign.
 * Returns how many deliveries it queued.
 */
export async function fanOut(
  trx: Executor,
  event: FannedEvent,
  now: Date,
): Promise<number> {
  return await fanOutMany(trx, event.accountId, [{ event, now }]);
}

/**
 * fanOut() of many events of one account, in the order given, with the same
 * rows and jobs as one fanOut() per event, in a few statements whatever
 * their number (a batch of 100 new recipients fans out 200 events): the
 * subscriptions read once, the pending contact.created chains of every
 * subject read once, and then kept up to date with the contact.created
 * deliveries made here (so a conversation.created waits for its contact's
 * contact.created of the same call), the deliveries and their jobs written
 * as multi-row inserts. `items` may be a function that makes them: it is
 * called only when the account has a subscription (most have none, and a
 * batch would make 200 for nothing).
 */
export async function fanOutMany(
  trx: Executor,
  accountId: string,
  items: readonly Fanning[] | (() => readonly Fanning[]),
): Promise<number> {
  if (typeof items !== "function" && items.length === 0) return 0;
  const read = await readFanOut(trx, accountId, items);
  if (!read) return 0;
  return (await writeFanOut(trx, read.reads, read.items)).queued;
}

/** What fanOutMany() reads before it writes (readFanOut). */
export interface FanOutReads {
  accountId: string;
  subscriptions: { id: string; enabled: number; wants: Set<string> }[];
  /** Subject -> subscription -> root id of its contact.created chain not delivered yet. */
  chains: Map<string, Map<string, string>>;
  /** The chains whose waiting job is in the lane behind live chat's. */
  behind: Set<string>;
}

/**
 * The reads of fanOutMany(): the account's subscriptions, then the pending
 * contact.created chains of the subjects whose events wait for theirs; null
 * when the account has no subscription (`items` is then not made).
 */
export async function readFanOut(
  db: Executor,
  accountId: string,
  items: readonly Fanning[] | (() => readonly Fanning[]),
): Promise<{ reads: FanOutReads; items: readonly Fanning[] } | null> {
  const subscriptions = (await subscribersOf(db, accountId)).map((s) => ({
    id: s.id,
    enabled: s.enabled,
    wants: new Set(fromJson<string[]>(s.events, [])),
  }));
  if (subscriptions.length === 0) return null;
  const made = typeof items === "function" ? items() : items;
  const waiting = made.flatMap(({ event }) =>
    WAITS_FOR_CONTACT.has(event.type) && event.subjectId &&
      subscriptions.some((s) => s.wants.has(event.type))
      ? [event.subjectId]
      : []
  );
  const { chains, behind } = await pendingContactCreated(db, {
    webhookIds: subscriptions.filter((s) => s.enabled === 1).map((s) => s.id),
    subjectIds: [...new Set(waiting)],
    lane: PRIORITY.webhook,
  });
  return {
    reads: { accountId, subscriptions, chains, behind },
    items: made,
  };
}

/**
 * The writes of fanOutMany() from its reads, which it reads nothing more
 * for (an atomic unit's write phase). `waitedOn`: the chains read (not made
 * here) that a new delivery waits for.
 */
export async function writeFanOut(
  trx: Executor,
  reads: FanOutReads,
  items: readonly Fanning[],
): Promise<{ queued: number; waitedOn: string[] }> {
  const { accountId } = reads;
  const all = reads.subscriptions;
  // Copies: the chains made here join them, and the reads may be used again.
  const chains = new Map(
    [...reads.chains].map(([subject, bySubscription]) => [
      subject,
      new Map(bySubscription),
    ]),
  );
  const readRoots = new Set(
    [...reads.chains.values()].flatMap((m) => [...m.values()]),
  );
  const waitedOn = new Set<string>();
  const rows: WebhookDeliveriesTable[] = [];
  const jobs: { job: EnqueueInput<typeof DELIVER_JOB>; now: Date }[] = [];
  // The chains a live event would wait behind: those whose waiting job is
  // in the batch lane, and those made here in it.
  const behindLive = new Set(reads.behind);
  const raise = new Set<string>();
  for (const { event, now } of items) {
    const subscribers = all.filter((s) => s.wants.has(event.type));
    if (subscribers.length === 0) continue;
    const waits = WAITS_FOR_CONTACT.has(event.type) && event.subjectId
      ? chains.get(event.subjectId)
      : undefined;
    const hash = payloadHash(event.dataText);
    const backstop = new Date(now.getTime() + WAITING_BACKSTOP_MS);
    for (const s of subscribers) {
      const on = s.enabled === 1;
      const row = pendingRow({
        id: newId(now.getTime()),
        account_id: accountId,
        webhook_id: s.id,
        event_id: event.eventId,
        event: event.type,
        kind: "event",
        payload_hash: hash,
        created_at: event.createdAt,
        subject_id: event.subjectId,
        after_root_id: on ? waits?.get(s.id) ?? null : null,
        ...(on ? {} : {
          status: "skipped",
          error_message:
            "Skipped: the subscription was disabled when the event occurred",
          next_attempt_at: null,
        }),
      });
      rows.push(row);
      if (!on) continue;
      const priority = LANE_PRIORITY[event.lane];
      const after = row.after_root_id;
      if (after && readRoots.has(after)) waitedOn.add(after);
      jobs.push({
        job: deliveryJob(
          row,
          after ? { runAt: backstop, priority } : { priority },
        ),
        now,
      });
      if (after && event.lane === "live" && behindLive.has(after)) {
        raise.add(after);
      }
      if (event.type === "contact.created" && event.subjectId) {
        if (event.lane === "batch") behindLive.add(row.root_id);
        const bySubscription = chains.get(event.subjectId) ?? new Map();
        bySubscription.set(s.id, row.root_id);
        chains.set(event.subjectId, bySubscription);
      }
    }
  }
  await insertDeliveries(trx, rows);
  // One insert per run of jobs made at the same time (a batch's events share
  // theirs); the JobInsertHook still wakes the webhook pool.
  for (let i = 0; i < jobs.length;) {
    const at = jobs[i]!.now;
    let end = i + 1;
    while (end < jobs.length && jobs[end]!.now.getTime() === at.getTime()) {
      end++;
    }
    await enqueueManyCompiled(
      trx,
      jobs.slice(i, end).map((j) => j.job),
      at,
      { wake: true },
    );
    i = end;
  }
  await raiseChains(trx, [...raise], PRIORITY.webhook);
  return { queued: jobs.length, waitedOn: [...waitedOn] };
}

import type { Db, Executor } from "../../db/schema.ts";
import { AppError } from "../../errors.ts";
import { subjectOf } from "../webhooks/delivery.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import {
  type Fanning,
  fanOutMany,
  readFanOut,
  writeFanOut,
} from "../webhooks/fanout_service.ts";
import { chainsStillPending } from "../webhooks/delivery_repo.ts";
import {
  EVENT_TYPES,
  type InsertedEvent,
  insertEventRow,
  insertEventRows,
  isInternalEvent,
  lastEventSeq,
  listEventRows,
  madeEvent,
  type NewEvent,
} from "./event_repo.ts";

export type {
  EventLane,
  EventType,
  InternalEventType,
  NewEvent,
} from "./event_repo.ts";

/**
 * Records a domain event and a webhook delivery for every subscription that
 * wants it; pass the transaction that writes the row the event is about, so
 * the row, its event and their deliveries commit together (or not at all).
 * With `held`, the row and its deliveries are written when the caller
 * flushes it (in the same transaction). Returns the event id.
 */
export async function recordEvent(
  trx: Executor,
  event: NewEvent,
  held?: HeldEvents,
): Promise<string> {
  if (held) return held.add(event);
  const inserted = await insertEventRow(trx, event);
  if (!isInternalEvent(event.type)) {
    await fanOutMany(trx, event.accountId, () => [fanning(event, inserted)]);
  }
  return inserted.id;
}

/**
 * Events held back until the end of a unit that records many one by one
 * (the status callbacks of a group commit): flush() writes their rows in
 * one statement, in the order added, and their deliveries and jobs with one
 * fanOutMany() per account, in the caller's transaction: the same rows, in
 * the same order, as a recordEvent() each.
 */
export class HeldEvents {
  #events: NewEvent[] = [];
  #made: InsertedEvent[] = [];

  /** Holds `event`; returns its id. */
  add(event: NewEvent): string {
    const made = madeEvent(event);
    this.#events.push(event);
    this.#made.push(made);
    return made.id;
  }

  /** The held events and their rows as made, no longer held. */
  protected take(): { events: NewEvent[]; made: InsertedEvent[] } {
    return { events: this.#events.splice(0), made: this.#made.splice(0) };
  }

  async flush(trx: Executor): Promise<void> {
    const { events, made } = this.take();
    if (events.length === 0) return;
    await insertEventRows(trx, events, made);
    const byAccount = Map.groupBy(
      [...events.keys()].filter((i) => !isInternalEvent(events[i]!.type)),
      (i) => events[i]!.accountId,
    );
    for (const [accountId, at] of byAccount) {
      await fanOutMany(
        trx,
        accountId,
        () => at.map((i) => fanning(events[i]!, made[i]!)),
      );
    }
  }
}

/**
 * Events a plan (src/db/planned_writes.ts) records, as HeldEvents holds
 * them: flushPlanned() reads what their deliveries need on the plan's
 * executor and records the rows on its writes.
 */
export class PlannedEvents extends HeldEvents {
  /**
   * The held events' rows, deliveries and jobs, recorded on `writes` from
   * what is read on `db` now, with a guard that the contact.created chains
   * a new delivery waits for are still pending (one whose chain ended
   * before the batch would wait out its backstop).
   */
  async flushPlanned(db: Executor, writes: PlannedWrites): Promise<void> {
    const { events, made } = this.take();
    if (events.length === 0) return;
    await insertEventRows(writes.db, events, made);
    const byAccount = Map.groupBy(
      [...events.keys()].filter((i) => !isInternalEvent(events[i]!.type)),
      (i) => events[i]!.accountId,
    );
    for (const [accountId, at] of byAccount) {
      const read = await readFanOut(
        db,
        accountId,
        () => at.map((i) => fanning(events[i]!, made[i]!)),
      );
      if (!read) continue;
      const { waitedOn } = await writeFanOut(writes.db, read.reads, read.items);
      if (waitedOn.length) writes.expectRow(chainsStillPending(waitedOn));
    }
  }
}

/** What fanOutMany() needs of an event whose row is in. */
function fanning(event: NewEvent, inserted: InsertedEvent): Fanning {
  return {
    event: {
      eventId: inserted.id,
      accountId: event.accountId,
      type: event.type,
      dataText: inserted.dataText,
      subjectId: subjectOf(event.type, event.data),
      createdAt: inserted.createdAt,
      lane: event.lane ?? "live",
    },
    now: new Date(inserted.createdAt),
  };
}

/**
 * recordEvent() for many events of one account, in the order given: the rows
 * in one statement, then the deliveries of them all in a few (fanOutMany),
 * so a batch costs the same statements for one event or two hundred.
 * Returns the event ids.
 */
export async function recordEvents(
  trx: Executor,
  accountId: string,
  events: readonly Omit<NewEvent, "accountId">[],
): Promise<string[]> {
  if (events.length === 0) return [];
  const all = events.map((e) => ({ ...e, accountId }));
  const inserted = await insertEventRows(trx, all);
  // Internal kinds (the panel's) have no deliveries: no subscription read.
  if (all.some((e) => !isInternalEvent(e.type))) {
    await fanOutMany(
      trx,
      accountId,
      () =>
        inserted.flatMap((row, i) =>
          isInternalEvent(all[i]!.type) ? [] : [fanning(all[i]!, row)]
        ),
    );
  }
  return inserted.map((r) => r.id);
}

/** One entry of the catch-up feed: the webhook's `data` with its event id and kind. */
export interface FeedEvent {
  eventId: string;
  type: string;
  createdAt: string;
  data: unknown;
}

export interface FeedPage {
  items: FeedEvent[];
  /** Where the next read starts: after the last item (or the given cursor when nothing is new). */
  cursor: string | null;
  hasMore: boolean;
}

/** The feed cursor of a sequence number (as GET /events and /panel/events give it). */
export function encodeFeedCursor(seq: number): string {
  return btoa(`events:${seq}`).replace(/=+$/, "");
}

/** The sequence number of a feed cursor; VALIDATION_ERROR when it is not one. */
export function decodeFeedCursor(cursor: string): number {
  try {
    const match = /^events:(\d{1,15})$/.exec(atob(cursor));
    if (match) return Number(match[1]);
  } catch { /* fall through */ }
  throw new AppError(
    "VALIDATION_ERROR",
    `Invalid query parameter "cursor": "${cursor}" is not a cursor returned by GET /events`,
  );
}

/**
 * The account's events oldest first, after `cursor`. Sequence numbers are
 * given in commit order (SQLite has one writer), so a consumer that follows
 * the cursor sees every event exactly once, even while events are written.
 */
export async function listEvents(
  deps: { db: Db },
  q: {
    accountId: string;
    cursor?: string | undefined;
    limit: number;
    types?: string[];
  },
): Promise<FeedPage> {
  const afterSeq = q.cursor ? decodeFeedCursor(q.cursor) : 0;
  for (const type of q.types ?? []) {
    if (!(EVENT_TYPES as readonly string[]).includes(type)) {
      throw new AppError(
        "VALIDATION_ERROR",
        `Invalid query parameter "type": "${type}" is not one of ${
          EVENT_TYPES.join(", ")
        }`,
      );
    }
  }
  // The spec's four kinds only: the panel's internal ones stay internal.
  const types = q.types?.length ? q.types : [...EVENT_TYPES];
  const rows = await listEventRows(deps.db, { ...q, types, afterSeq });
  const hasMore = rows.length > q.limit;
  const page = hasMore ? rows.slice(0, q.limit) : rows;
  const last = page.at(-1);
  return {
    items: page.map((r) => ({
      eventId: r.id,
      type: r.type,
      createdAt: r.created_at,
      data: JSON.parse(r.data),
    })),
    cursor: last ? encodeFeedCursor(last.seq) : q.cursor ?? null,
    hasMore,
  };
}

/** The cursor just after the account's newest event (`events:0` when it has none). */
export async function feedHead(
  deps: { db: Db },
  accountId: string,
): Promise<string> {
  return encodeFeedCursor(await lastEventSeq(deps.db, accountId));
}

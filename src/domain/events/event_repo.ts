import { CompiledQuery, sql } from "kysely";
import type { Selectable } from "kysely";
import type { EventsTable, Executor } from "../../db/schema.ts";
import { insertRows } from "../../db/bulk.ts";
import { executeCompiled } from "../../db/raw.ts";
import { deleteInBatches } from "../../db/prune.ts";
import { toDbTime } from "../../db/time.ts";
import { newId } from "../../ids.ts";

/** The domain event kinds of the spec's Events section. */
export type EventType =
  | "message.received"
  | "message.status_changed"
  | "conversation.created"
  | "contact.created";

export const EVENT_TYPES: readonly EventType[] = [
  "message.received",
  "message.status_changed",
  "conversation.created",
  "contact.created",
];

/**
 * Kinds the panel's stream needs besides the spec's four (issue 29), kept
 * in the same feed (so one cursor orders them all) but never shown by GET
 * /events nor delivered to webhook subscriptions:
 * - message.created: an outbound message was accepted (API, panel, batch,
 *   or an echo of the business app); data: the API's Message.
 * - message.updated: a message changed besides its status (a customer's
 *   edit or deletion, its media stored or failed); data: the API's Message.
 * - conversation.updated: status or assignee changed; data: the API's
 *   Conversation plus previousStatus and previousAssignedTo.
 * - conversation.read: the unread count was reset; data: { conversationId }.
 */
export type InternalEventType =
  | "message.created"
  | "message.updated"
  | "conversation.updated"
  | "conversation.read";

export const INTERNAL_EVENT_TYPES: readonly InternalEventType[] = [
  "message.created",
  "message.updated",
  "conversation.updated",
  "conversation.read",
];

/** Whether a kind is internal (panel only: no webhook, not in GET /events). */
export function isInternalEvent(type: string): boolean {
  return (INTERNAL_EVENT_TYPES as readonly string[]).includes(type);
}

export interface NewEvent {
  accountId: string;
  type: EventType | InternalEventType;
  /** The event's `data`, already in its wire shape. */
  data: unknown;
  /** A Date or a database time string (ISO 8601 UTC with ms). */
  createdAt: Date | string;
  /**
   * Whose traffic the event is: "batch" for a campaign's (the status changes
   * of a batch message, the contacts and conversations a batch made), whose
   * webhook deliveries queue behind live chat's, as their sends do.
   * @default "live"
   */
  lane?: EventLane;
}

export type EventLane = "live" | "batch";

/** An event row as written: its id and the exact `data` text stored. */
export interface InsertedEvent {
  id: string;
  dataText: string;
  createdAt: string;
}

/** Every new contact and conversation records an event: written once. */
const INSERT_EVENT_SQL =
  "insert into events (id, account_id, type, data, created_at) values (?, ?, ?, ?, ?)";

/**
 * Inserts the event row only; use recordEvent() (event_service.ts), which
 * also creates its webhook deliveries in the same transaction.
 */
export async function insertEventRow(
  db: Executor,
  event: NewEvent,
): Promise<InsertedEvent> {
  const { id, dataText, createdAt } = madeEvent(event);
  // Straight on SQLite when it can (db/raw.ts): every send records one.
  await executeCompiled(
    db,
    CompiledQuery.raw(INSERT_EVENT_SQL, [
      id,
      event.accountId,
      event.type,
      dataText,
      createdAt,
    ]),
  );
  return { id, dataText, createdAt };
}

/** The id, `data` text and time an event's row is written with. */
export function madeEvent(event: NewEvent): InsertedEvent {
  return {
    id: newId(),
    dataText: JSON.stringify(event.data ?? null),
    createdAt: typeof event.createdAt === "string"
      ? event.createdAt
      : toDbTime(event.createdAt),
  };
}

/**
 * insertEventRow() for many events (one statement for a batch); their sequence numbers
 * follow the order given. `inserted`: their rows as made already (madeEvent).
 */
export async function insertEventRows(
  db: Executor,
  events: readonly NewEvent[],
  inserted: InsertedEvent[] = events.map(madeEvent),
): Promise<InsertedEvent[]> {
  await insertRows(
    db,
    "events",
    inserted.map((e, i) => ({
      id: e.id,
      account_id: events[i]!.accountId,
      type: events[i]!.type,
      data: e.dataText,
      created_at: e.createdAt,
    })),
  );
  return inserted;
}

/** Whether the account's event of this sequence number is still kept. */
export async function eventKept(
  db: Executor,
  accountId: string,
  seq: number,
): Promise<boolean> {
  const row = await db.selectFrom("events").select("seq")
    .where("seq", "=", seq).where("account_id", "=", accountId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The account's conversation.updated events after `afterSeq`, oldest first: who each took the conversation from. */
export async function conversationChangesAfter(
  db: Executor,
  accountId: string,
  afterSeq: number,
): Promise<{ seq: number; id: string; previousAssignedTo: string | null }[]> {
  const rows = await db.selectFrom("events")
    .select([
      "seq",
      sql<string>`json_extract(data, '$.id')`.as("id"),
      sql<string | null>`json_extract(data, '$.previousAssignedTo')`.as(
        "previous",
      ),
    ])
    .where("account_id", "=", accountId).where("seq", ">", afterSeq)
    .where("type", "=", "conversation.updated")
    .orderBy("seq").execute();
  return rows.map((r) => ({
    seq: Number(r.seq),
    id: r.id,
    previousAssignedTo: r.previous,
  }));
}

/** The newest sequence number of any account (0 when none): what the panel's streams poll. */
export async function newestEventSeq(db: Executor): Promise<number> {
  const row = await db.selectFrom("events").select("seq")
    .orderBy("seq", "desc").limit(1).executeTakeFirst();
  return row ? Number(row.seq) : 0;
}

/** The account's events after `afterSeq`, oldest first; `limit + 1` rows. */
export async function listEventRows(
  db: Executor,
  q: { accountId: string; afterSeq: number; limit: number; types?: string[] },
): Promise<Selectable<EventsTable>[]> {
  let query = db.selectFrom("events").selectAll()
    .where("account_id", "=", q.accountId)
    .where("seq", ">", q.afterSeq);
  if (q.types?.length) query = query.where("type", "in", q.types);
  return await query.orderBy("seq").limit(q.limit + 1).execute();
}

/** The sequence number of the account's newest event, 0 when it has none. */
export async function lastEventSeq(
  db: Executor,
  accountId: string,
): Promise<number> {
  const row = await db.selectFrom("events").select("seq")
    .where("account_id", "=", accountId).orderBy("seq", "desc").limit(1)
    .executeTakeFirst();
  return row ? Number(row.seq) : 0;
}

/** The stored `data` text of an event, or undefined once pruned. */
export async function findEventData(
  db: Executor,
  id: string,
): Promise<string | undefined> {
  const row = await db.selectFrom("events").select("data")
    .where("id", "=", id).executeTakeFirst();
  return row?.data;
}

/** Deletes events created before `cutoff` that no pending delivery still needs; returns how many. */
export async function pruneEvents(
  db: Executor,
  cutoff: string,
): Promise<number> {
  return await deleteInBatches(
    db,
    "events",
    // The pending rows' event ids are read once per statement, through the
    // partial index of pending rows (migration 0013).
    sql`created_at < ${cutoff} and id not in (
      select event_id from webhook_deliveries where status = 'pending')`,
  );
}

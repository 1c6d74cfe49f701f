import type { Executor } from "../../db/schema.ts";
import { toJson } from "../../db/json.ts";
import { toDbTime } from "../../db/time.ts";
import { newId } from "../../ids.ts";

/** The domain event kinds of the spec's Events section. */
export type EventType =
  | "message.received"
  | "message.status_changed"
  | "conversation.created"
  | "contact.created";

export interface NewEvent {
  accountId: string;
  type: EventType;
  /** The event's `data`, already in its wire shape. */
  data: unknown;
  /** A Date or a database time string (ISO 8601 UTC with ms). */
  createdAt: Date | string;
}

/**
 * Records a domain event; pass the transaction that writes the row it is
 * about, so the row and its event commit together. Returns the event id.
 */
export async function insertEvent(
  db: Executor,
  event: NewEvent,
): Promise<string> {
  const id = newId();
  await db.insertInto("events").values({
    id,
    account_id: event.accountId,
    type: event.type,
    data: toJson(event.data),
    created_at: typeof event.createdAt === "string"
      ? event.createdAt
      : toDbTime(event.createdAt),
  }).execute();
  return id;
}

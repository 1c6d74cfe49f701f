/** What a management webhook change handler is given and answers (management_service.ts). */
import type { Executor } from "../../db/schema.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import type { Waba } from "../wabas/waba_repo.ts";

/**
 * A change to apply: read on `db`, write on `writes.db` (planned writes:
 * on libSQL they go in one batch after the reads), with a guard on what a
 * write depends on that another writer could change in between.
 */
export interface ManagementChange {
  db: Executor;
  writes: PlannedWrites;
  waba: Waba;
  field: string;
  /** The change's value, read with Meta's ids exact (parseJsonExact). */
  value: Record<string, unknown>;
  /** entry[].time (unix seconds), null when Meta sent none. */
  entryTime: number | null;
  now: Date;
  /** Unique per stored change: job keys made for it are unique per change. */
  eventId: string;
}

/** What applying a change did; stored on its meta_events row. */
export interface Applied {
  outcome:
    | "applied"
    | "stale"
    | "refresh_queued"
    | "recorded"
    | "unknown_template"
    | "unknown_number"
    | "unreadable";
  note?: string;
  /** What it is about: a template id, a phone number. */
  subject?: string;
  /** The change's event (APPROVED, THROUGHPUT_UPGRADE ...). */
  event?: string;
}

/** A value's string (a number written as its digits), or null. */
export function str(v: unknown): string | null {
  return typeof v === "string" && v !== ""
    ? v
    : typeof v === "number" && Number.isFinite(v)
    ? String(v)
    : null;
}

/** Older than what was applied last: such an event changes nothing (Meta does not keep order). */
export function isStale(
  entryTime: number | null,
  lastApplied: number | null,
): boolean {
  return entryTime !== null && lastApplied !== null && entryTime < lastApplied;
}

/** The later of the two times (the watermark after applying an event). */
export function latest(
  entryTime: number | null,
  lastApplied: number | null,
): number | null {
  if (entryTime === null) return lastApplied;
  return lastApplied === null ? entryTime : Math.max(entryTime, lastApplied);
}

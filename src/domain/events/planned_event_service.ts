import type { Executor } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { PlannedWrites } from "../../db/planned_writes.ts";
import { type HeldEvents, PlannedEvents } from "./event_service.ts";

/** Where a plan (src/db/planned_writes.ts) records its writes and its events. */
export interface Planned {
  writes: PlannedWrites;
  /** Pass as recordEvent()'s `held`: the events are written when the plan has decided. */
  events: HeldEvents;
}

/**
 * Runs a plan that records events in the group commit: on embedded SQLite
 * in its transaction, on libSQL as its reads, then a batch. Its events
 * (with their deliveries and jobs) are recorded after it decided, in its
 * writes (PlannedEvents).
 */
export function runPlannedWithEvents<T>(
  commits: Pick<GroupCommit, "runPlanned">,
  plan: (db: Executor, planned: Planned) => Promise<T>,
): Promise<T> {
  return commits.runPlanned(async (db, writes) => {
    const events = new PlannedEvents();
    const result = await plan(db, { writes, events });
    await events.flushPlanned(db, writes);
    return () => result;
  });
}

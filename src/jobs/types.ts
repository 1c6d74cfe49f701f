/** Shapes of the durable job table as the rest of the program sees it (re-exported by queue.ts). */
import type { JobKind, JobPayload } from "./kinds.ts";

/** River's state names: a job is `running` only while a worker holds its lease. */
export type JobState =
  | "available"
  | "running"
  | "retryable"
  | "completed"
  | "discarded";

/** One failed (or released) attempt, appended to the job's `errors` array. */
export interface JobError {
  at: string;
  attempt: number;
  error: string;
}

/** A job as the queue core stores it, whatever its kind (see EnqueueInput for the typed one). */
export interface AnyJobInput {
  /** `resource.verb`, e.g. `message.send`. */
  kind: string;
  /** Ids, not copies of rows: handlers reload the current state. Stored as JSON. */
  payload: unknown;
  /** Lower runs first; use PRIORITY from queue.ts. */
  priority: number;
  /** @default now */
  runAt?: Date;
  /** @default DEFAULT_MAX_ATTEMPTS (25) */
  maxAttempts?: number;
  /** At most one job per key, over all states, until the finished job is pruned. */
  uniqueKey?: string;
  /** Jobs sharing a group (a webhook subscription) can be capped in flight by the pool. */
  groupKey?: string;
}

/**
 * A job of a kind in JOB_KINDS with its typed payload; priority, maxAttempts
 * and uniqueKey default to the kind's lane, attempts and key. A union over
 * the kinds, so a literal `{ kind: "message.send", payload: ... }` is checked
 * against its own kind's payload.
 */
export type EnqueueInput<K extends JobKind = JobKind> = K extends JobKind ?
    & Omit<AnyJobInput, "kind" | "payload" | "priority">
    & { kind: K; payload: JobPayload<K>; priority?: number }
  : never;

/** A claimed job: `leaseToken` proves this worker still owns it. */
export interface JobRow {
  id: string;
  kind: string;
  priority: number;
  payload: unknown;
  /** 1-based number of the attempt this claim started. */
  attempt: number;
  maxAttempts: number;
  runAt: string;
  leaseToken: string;
  uniqueKey: string | null;
  groupKey: string | null;
  errors: JobError[];
  /** When the job was first held (HoldJob); null for a job never held. */
  heldSince?: string | null;
  /**
   * Where the claim found the row (SQLite's rowid): settling goes to it
   * directly instead of searching the id index, the id still checked.
   */
  rowid?: number;
}

/** What complete() and release() need to prove ownership (and the rowid hint, when claimed). */
export type JobLease = Pick<JobRow, "id" | "leaseToken" | "rowid">;

/** What fail() needs: ownership plus the attempt number for the backoff. */
export type ClaimedJob = Pick<
  JobRow,
  "id" | "leaseToken" | "attempt" | "rowid"
>;

export type FailOutcome = "retryable" | "discarded" | "lost";

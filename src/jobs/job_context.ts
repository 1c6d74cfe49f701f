/** What a job handler is given: its job, lease signal, logger and ways to complete it in its own transaction. */
import type { Logger } from "../log.ts";
import type { Clock } from "../clock.ts";
import type { Executor } from "../db/schema.ts";
import { complete } from "./queue_settle.ts";
import type { JobRow } from "./types.ts";

export interface JobContext {
  job: JobRow;
  /** Aborted when the lease is lost or the pool gave the job back at shutdown. */
  signal: AbortSignal;
  /**
   * Aborted when the pool starts draining (shutdown), and whenever `signal`
   * is: work that has not begun an outside effect (a send still waiting for
   * its number's turn) should give its job back now (RetryLater), rather
   * than begin it and be cut off in the middle when the drain times out.
   */
  stopping: AbortSignal;
  log: Logger;
  /**
   * Completes the job inside the handler's transaction, so its work and the
   * job's end commit together; false when the lease was lost. When the
   * handler then returns normally, the pool settles nothing more.
   */
  completeIn(trx: Executor): Promise<boolean>;
  /**
   * For a handler that completes its job with others in one statement
   * (completeMany() over their leases, in its transaction): tells the pool
   * whether this job was completed there, as completeIn() would have.
   */
  markCompleted(done: boolean): void;
}

export type JobHandler = (payload: unknown, ctx: JobContext) => Promise<void>;

/** A job's logger (its id, kind and attempt bound), made on first use: most jobs log nothing. */
export class JobLogger implements Logger {
  #parent: Logger;
  #job: JobRow;
  #log: Logger | undefined;

  constructor(parent: Logger, job: JobRow) {
    this.#parent = parent;
    this.#job = job;
  }

  #made(): Logger {
    const { id, kind, attempt } = this.#job;
    return this.#log ??= this.#parent.child({ jobId: id, kind, attempt });
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.#made().debug(msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.#made().info(msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.#made().warn(msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.#made().error(msg, fields);
  }
  child(bindings: Record<string, unknown>): Logger {
    return this.#made().child(bindings);
  }
}

/**
 * One claimed job in a worker pool: what the pool tracks of it and, as one
 * object, the context its handler gets (the AbortController is made only when the signal is read or aborted).
 */
export class JobRun implements JobContext {
  readonly job: JobRow;
  readonly log: Logger;
  /** Clock time the handler started (ms); kept only for capped groups (0 otherwise). */
  readonly startedAt: number;
  done: Promise<void> = Promise.resolve();
  /** Set once drain() gave the job back: the pool must not settle it again. */
  released = false;
  /** Set once the handler completed the job in its own transaction. */
  completedIn = false;
  /** Set once the handler returned or threw: only its settlement is left. */
  handlerDone = false;
  #clock: Clock;
  #controller: AbortController | undefined;
  #stopping: AbortController | undefined;

  constructor(job: JobRow, parent: Logger, clock: Clock, startedAt: number) {
    this.job = job;
    this.log = new JobLogger(parent, job);
    this.#clock = clock;
    this.startedAt = startedAt;
  }

  get signal(): AbortSignal {
    return (this.#controller ??= new AbortController()).signal;
  }

  /** Aborts the handler's signal (lease lost, shutdown), and `stopping` with it. */
  abort(reason: Error): void {
    (this.#controller ??= new AbortController()).abort(reason);
    this.stop();
  }

  get stopping(): AbortSignal {
    return (this.#stopping ??= new AbortController()).signal;
  }

  /** Aborts `stopping`: the pool is draining. */
  stop(): void {
    (this.#stopping ??= new AbortController()).abort(
      new Error("Worker pool is shutting down"),
    );
  }

  // Arrow properties, not methods: a handler may pass them on detached.
  completeIn = async (trx: Executor): Promise<boolean> => {
    this.completedIn = await complete(trx, this.job, this.#clock.now());
    return this.completedIn;
  };

  markCompleted = (done: boolean): void => {
    this.completedIn = done;
  };
}

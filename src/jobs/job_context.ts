/** What a job handler is given: its job, lease signal, logger and ways to complete it in its own transaction. */
import type { Logger } from "../log.ts";
import type { Executor } from "../db/schema.ts";
import type { JobRow } from "./types.ts";

export interface JobContext {
  job: JobRow;
  /** Aborted when the lease is lost or the pool gave the job back at shutdown. */
  signal: AbortSignal;
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

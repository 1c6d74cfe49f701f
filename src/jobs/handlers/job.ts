/** The shape of one job kind's handler (one file per kind in this folder, listed in registry.ts). */
import type { Container } from "../../container.ts";
import type { JobKind, ParsedPayload } from "../kinds.ts";
import type { JobContext } from "../worker_pool.ts";

/** A handler of payloads `P` (see jobHandler() in registry.ts). */
export interface RunnableJob<P> {
  /** Runs the job with its payload parsed by the kind's schema. */
  run(payload: P, ctx: JobContext): Promise<void>;
  /**
   * Runs once when the job fails for good (a permanent error, or any error
   * on its last attempt, see jobs/attempts.ts), before it is discarded: the
   * place to record the final outcome (a message marked failed). Once it
   * returns, the job is completed: its failure is recorded in the domain.
   */
  onFinalFailure?(payload: P, error: unknown, ctx: JobContext): Promise<void>;
}

export type JobDefinition<K extends JobKind> = RunnableJob<ParsedPayload<K>>;

export type DefineJob<K extends JobKind> = (c: Container) => JobDefinition<K>;

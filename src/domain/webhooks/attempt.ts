/** What making a delivery attempt needs (shared by the attempt and its recording). */
import type { Db } from "../../db/schema.ts";
import type { GroupCommit } from "../../db/group_commit.ts";
import type { Clock } from "../../clock.ts";
import type { SecretBox } from "../../crypto.ts";
import type { Logger } from "../../log.ts";
import type { EgressClient } from "../../egress/http_client.ts";
import type { AppMetrics } from "../../metrics/app_metrics.ts";
import type { JobLease, JobRow } from "../../jobs/queue.ts";

export interface AttemptDeps {
  db: Db;
  /** Attempts that end together are recorded in one unit (GroupCommit.runPlanned). */
  commits: Pick<GroupCommit, "runPlanned">;
  clock: Clock;
  log: Logger;
  secrets: SecretBox;
  egress: Pick<EgressClient, "request">;
  metrics: AppMetrics;
}

export interface AttemptContext {
  signal?: AbortSignal;
  /**
   * The attempt's job: the unit that records the attempt completes
   * it, with the other jobs recorded there, in one statement (completeMany).
   * A retry is queued in its lane (`priority`).
   */
  lease: JobLease & Pick<JobRow, "priority">;
  /** Tells the job's runner whether that completion happened (false: the lease was lost). */
  markCompleted(done: boolean): void;
}

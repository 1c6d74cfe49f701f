/**
 * The last-attempt rule, in one place. A job's attempt counts from 1 at its
 * claim; the attempt with `attempt >= maxAttempts` is the last: a failure
 * then is final (the job is discarded and its kind's final-failure hook
 * runs). A job whose lease expired on its last attempt (its worker died) gets
 * one more run, so its handler can still record the final outcome; it is
 * discarded only once past that.
 */

/** True when a failure of this attempt is final. */
export function isLastAttempt(
  job: { attempt: number; maxAttempts: number },
): boolean {
  return job.attempt >= job.maxAttempts;
}

/** isLastAttempt() over the jobs table's columns (fail()). */
export const LAST_ATTEMPT_SQL = "jobs.attempt >= jobs.max_attempts";

/** A lease lost past the last attempt is not run again (rescueExpiredLeases()). */
export const PAST_LAST_ATTEMPT_SQL = "attempt > max_attempts";

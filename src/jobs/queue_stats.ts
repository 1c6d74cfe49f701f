/** Job table figures for the metrics endpoint. */
import { sql } from "kysely";
import type { Db } from "../db/schema.ts";
import { toDbTime } from "../db/time.ts";

export interface LaneStats {
  priority: number;
  /** Due and waiting for a worker. */
  ready: number;
  /** run_at of the oldest due job, or null. */
  oldestReadyAt: string | null;
  running: number;
}

/** Due and running jobs per priority (lane), for the metrics endpoint. */
export async function laneStats(db: Db, now: Date): Promise<LaneStats[]> {
  const at = toDbTime(now);
  const due = sql`state in ('available', 'retryable') and run_at <= ${at}`;
  const { rows } = await sql<{
    priority: number;
    ready: number;
    oldest: string | null;
    running: number;
  }>`
    select priority,
      sum(case when ${due} then 1 else 0 end) as ready,
      min(case when ${due} then run_at end) as oldest,
      sum(case when state = 'running' then 1 else 0 end) as running
    from jobs where state in ('available', 'retryable', 'running')
    group by priority`.execute(db);
  return rows.map((r) => ({
    priority: Number(r.priority),
    ready: Number(r.ready),
    oldestReadyAt: r.oldest,
    running: Number(r.running),
  }));
}

/** Number of jobs per state (every state present, zero when empty). */
export async function countByState(db: Db): Promise<Record<string, number>> {
  const rows = await db.selectFrom("jobs")
    .select(["state", (eb) => eb.fn.countAll<number>().as("n")])
    .groupBy("state")
    .execute();
  const out: Record<string, number> = {
    available: 0,
    running: 0,
    retryable: 0,
    completed: 0,
    discarded: 0,
  };
  for (const r of rows) out[r.state] = Number(r.n);
  return out;
}

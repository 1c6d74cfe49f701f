import type { Db } from "../../db/schema.ts";
import type { Clock } from "../../clock.ts";
import { PRIORITY } from "../../jobs/queue.ts";
import { laneStats } from "../../jobs/queue_stats.ts";
import type { AppMetrics } from "../../metrics/app_metrics.ts";
import type { WriteSlotStats } from "../../db/write_slots.ts";
import { countDisabled } from "../webhooks/webhook_repo.ts";

const LANE_BY_PRIORITY = new Map<number, string>(
  Object.entries(PRIORITY).map(([lane, priority]) => [priority, lane]),
);

/** Refreshes the gauges that live in the database, then renders every metric. */
export async function renderMetrics(
  deps: {
    db: Db;
    clock: Clock;
    metrics: AppMetrics;
    dbWrites?: { stats(): WriteSlotStats } | undefined;
  },
): Promise<string> {
  const now = deps.clock.now();
  const lanes = await laneStats(deps.db, now);
  const label = (p: number) => ({ lane: LANE_BY_PRIORITY.get(p) ?? String(p) });
  const byLane = new Map(lanes.map((l) => [l.priority, l]));
  const all = [...new Set([...Object.values(PRIORITY), ...byLane.keys()])];
  deps.metrics.jobsReady.reset(
    all.map((p) => ({ labels: label(p), value: byLane.get(p)?.ready ?? 0 })),
  );
  deps.metrics.jobsRunning.reset(
    all.map((p) => ({ labels: label(p), value: byLane.get(p)?.running ?? 0 })),
  );
  deps.metrics.jobsOldestReadyAge.reset(all.map((p) => {
    const oldest = byLane.get(p)?.oldestReadyAt;
    const age = oldest ? (now.getTime() - Date.parse(oldest)) / 1_000 : 0;
    return { labels: label(p), value: Math.max(0, age) };
  }));
  const disabled = await countDisabled(deps.db);
  deps.metrics.webhooksDisabled.reset([
    { labels: { reason: "auto" }, value: disabled.auto },
    { labels: { reason: "manual" }, value: disabled.manual },
  ]);
  const writes = deps.dbWrites?.stats();
  if (writes) {
    deps.metrics.dbWrites.reset([
      { labels: { state: "in_flight" }, value: writes.inFlight },
      { labels: { state: "waiting" }, value: writes.waiting },
      { labels: { state: "peak" }, value: writes.peak },
      { labels: { state: "retries" }, value: writes.retries },
    ]);
  }
  return deps.metrics.registry.render();
}

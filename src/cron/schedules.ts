/**
 * Cron only enqueues. Each tick enqueues its job with the unique key `cron:<kind>:<tick ISO>`, so
 * when several instances run the same schedule, exactly one job exists per tick.
 */
import { Cron } from "croner";
import type { Clock } from "../clock.ts";
import type { Logger } from "../log.ts";
import type { Db } from "../db/schema.ts";
import { enqueue, type EnqueueInput, PRIORITY } from "../jobs/queue.ts";
import type { JobKind, JobPayload } from "../jobs/kinds.ts";

/** The kinds a schedule can enqueue: those whose payload may be empty. */
export type CronKind = {
  [K in JobKind]: Record<never, never> extends JobPayload<K> ? K : never;
}[JobKind];

export interface Schedule {
  /** Job kind to enqueue, e.g. "jobs.rescue". */
  kind: CronKind;
  /** Cron pattern in UTC; five fields, or six with seconds first. */
  pattern: string;
  /** @default {} */
  payload?: Record<string, unknown>;
}

export const DEFAULT_SCHEDULES: readonly Schedule[] = [
  { kind: "jobs.rescue", pattern: "* * * * *" },
  { kind: "jobs.prune", pattern: "0 * * * *" },
  // Queues one refresh per social account (about 120 upstream calls per hour each).
  { kind: "social.refresh_all", pattern: "0 */6 * * *" },
  // Queues a template sync of each WABA last synced TEMPLATE_SYNC_INTERVAL ago.
  { kind: "templates.sync_due", pattern: "*/10 * * * *" },
  // Queues a health check (GET /{phone-number-id}) of every channel.
  { kind: "channels.health_all", pattern: "30 * * * *" },
];

export interface CronDeps {
  db: Db;
  clock: Clock;
  log: Logger;
}

export interface CronHandle {
  /** Stops every schedule and resolves once ticks already running have finished enqueueing. */
  stop(): Promise<void>;
}

/**
 * The scheduled time a run belongs to. croner's currentRun() is the wall time the timer fired,
 * which can be late (a busy event loop, a slow instance), so two instances could disagree.
 * Walk back to the latest second the pattern matches: the one whose next run, seen from a
 * second before, is itself.
 */
export function scheduledTick(cron: Cron, firedAt: Date): Date {
  const second = Math.floor(firedAt.getTime() / 1_000) * 1_000;
  for (let back = 0; back <= 120; back++) {
    const candidate = second - back * 1_000;
    const next = cron.nextRun(new Date(candidate - 1_000));
    if (next?.getTime() === candidate) return new Date(candidate);
  }
  return new Date(second);
}

async function tick(deps: CronDeps, cron: Cron, schedule: Schedule) {
  try {
    const at = scheduledTick(cron, cron.currentRun() ?? new Date())
      .toISOString();
    // A CronKind takes an object payload (see CronKind).
    const job = {
      kind: schedule.kind,
      payload: schedule.payload ?? {},
      priority: PRIORITY.maintenance,
      uniqueKey: `cron:${schedule.kind}:${at}`,
    } as EnqueueInput;
    const id = await enqueue(deps.db, job, deps.clock.now());
    deps.log.debug(id ? "Cron tick enqueued" : "Cron tick already enqueued", {
      kind: schedule.kind,
      tick: at,
      jobId: id,
    });
  } catch (err) {
    deps.log.error("Cannot enqueue cron job", { kind: schedule.kind, err });
  }
}

/** Starts one croner timer per schedule; each tick only enqueues a job (priority maintenance). */
export function startCron(
  deps: CronDeps,
  schedules: readonly Schedule[] = DEFAULT_SCHEDULES,
): CronHandle {
  const inFlight = new Set<Promise<void>>();
  const crons = schedules.map((schedule) =>
    new Cron(schedule.pattern, {
      // UTC as an offset: croner then reads UTC fields, where a timezone
      // name makes it format every date it visits through Intl (ICU data).
      utcOffset: 0,
      protect: true,
      catch: (err: unknown) =>
        deps.log.error("Cron tick failed", { kind: schedule.kind, err }),
    }, (self: Cron) => {
      const running = tick(deps, self, schedule);
      inFlight.add(running);
      return running.finally(() => inFlight.delete(running));
    })
  );
  return {
    async stop() {
      for (const cron of crons) cron.stop();
      await Promise.all([...inFlight]);
    },
  };
}

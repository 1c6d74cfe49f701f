import type { Hono } from "hono";
import type { Container } from "./container.ts";
import type { AppEnv } from "./http/env.ts";
import { WorkerPool } from "./jobs/worker_pool.ts";
import { PRIORITY, WEBHOOK_LANES } from "./jobs/queue.ts";
import { concerns } from "./jobs/signal.ts";
import { createJobHandlers, splitHandlers } from "./jobs/registry.ts";
import { startCron } from "./cron/schedules.ts";

/** A running part of the program that stops in order (HTTP, cron, workers, then the database). */
export interface Stoppable {
  name: string;
  stop(): Promise<void>;
}

export interface Running {
  port: number;
  stop(): Promise<void>;
}

/** Serves the app and remembers what to stop, in the order given after the HTTP server. */
export function serve(
  container: Container,
  app: Hono<AppEnv>,
  parts: Stoppable[] = [],
): Running {
  const server = Deno.serve({
    port: container.config.port,
    hostname: container.config.host,
    onListen: () => {},
  }, app.fetch);
  const port = server.addr.port;
  container.log.info("Listening", { port, host: container.config.host });
  let stopping: Promise<void> | undefined;
  return {
    port,
    stop() {
      stopping ??= (async () => {
        // /readyz answers 503 while requests are still served, so a proxy
        // that follows it sends no new request here once the server stops
        // taking them.
        container.draining.start();
        const delayMs = container.config.shutdownDelayMs;
        if (delayMs > 0) {
          container.log.info("Draining: /readyz answers 503", { delayMs });
          await new Promise((resolve) => setTimeout(resolve, delayMs));
        }
        // Open event streams first: the server's drain waits for every
        // response to end, and a stream never would.
        await container.streams.closeAll();
        await server.shutdown();
        for (const part of parts) {
          try {
            await part.stop();
          } catch (err) {
            container.log.error("Cannot stop part cleanly", {
              part: part.name,
              err,
            });
          }
        }
      })();
      return stopping;
    },
  };
}

/** Resolves on the first SIGINT or SIGTERM. */
export function waitForShutdownSignal(): Promise<string> {
  return new Promise((resolve) => {
    const handler = (signal: string) => () => resolve(signal);
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      Deno.addSignalListener(signal, handler(signal));
    }
  });
}

/**
 * A running job's lease; the pool heartbeats it every half lease, and every
 * pool rescues expired leases every 5 s. So the jobs of an instance that
 * died (kill -9, a lost machine) run elsewhere at most 12 + 5 s after its
 * last heartbeat, under the 20 s docs/operations.md promises.
 */
const LEASE_MS = 12_000;
/** The main pool's lanes: every one the webhook pool does not serve. */
const MAIN_LANES = Object.values(PRIORITY).filter((p) =>
  !WEBHOOK_LANES.includes(p)
);

/** Starts the worker pools and cron; returns them as parts to stop (cron first, then drained pools). */
export function startBackground(
  container: Container,
  options: { concurrency?: number } = {},
): Stoppable[] {
  const handlers = splitHandlers(createJobHandlers(container));
  // libSQL: outcomes of several kinds settle in one write batch, never in an
  // interactive transaction (issue 30); SQLite keeps its transaction.
  const plans = container.engine === "libsql" ? container.commits : undefined;
  const pool = new WorkerPool({
    db: container.db,
    clock: container.clock,
    plans,
    log: container.log.child({ component: "jobs" }),
    handlers: handlers.main,
    concurrency: options.concurrency ?? container.config.workers,
    leaseMs: LEASE_MS,
    lanes: MAIN_LANES,
  });
  const webhookPool = new WorkerPool({
    db: container.db,
    clock: container.clock,
    plans,
    log: container.log.child({ component: "webhooks" }),
    handlers: handlers.webhooks,
    concurrency: container.config.webhookConcurrency,
    maxPerGroup: container.config.webhookMaxInFlight,
    maxPerOwner: container.config.webhookMaxInFlightPerAccount,
    reserveUrgentSlot: false,
    leaseMs: LEASE_MS,
    lanes: WEBHOOK_LANES,
  });
  const unsubscribe = container.jobs.subscribe((lanes) => {
    if (concerns(MAIN_LANES, lanes)) pool.notify();
    if (concerns(WEBHOOK_LANES, lanes)) webhookPool.notify();
  });
  pool.start();
  webhookPool.start();
  const cron = startCron({
    db: container.db,
    clock: container.clock,
    log: container.log.child({ component: "cron" }),
  });
  return [
    { name: "cron", stop: () => Promise.resolve(cron.stop()) },
    {
      name: "workers",
      stop: async () => {
        unsubscribe();
        const drained = (await Promise.all([
          pool.drain(container.config.shutdownDrainMs),
          webhookPool.drain(container.config.shutdownDrainMs),
        ])).every(Boolean);
        if (!drained) {
          container.log.warn("Released unfinished jobs at shutdown");
        }
      },
    },
  ];
}

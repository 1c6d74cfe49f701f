import type { Hono } from "hono";
import type { Container } from "./container.ts";
import type { AppEnv } from "./http/env.ts";
import { WorkerPool } from "./jobs/worker_pool.ts";
import { createJobHandlers } from "./jobs/registry.ts";
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

/** Starts the worker pool and cron; returns them as parts to stop (cron first, then a drained pool). */
export function startBackground(
  container: Container,
  options: { concurrency?: number } = {},
): Stoppable[] {
  const pool = new WorkerPool({
    db: container.db,
    clock: container.clock,
    log: container.log.child({ component: "jobs" }),
    handlers: createJobHandlers(container),
    concurrency: options.concurrency ?? container.config.workers,
    leaseMs: 30_000,
  });
  const unsubscribe = container.jobs.subscribe(() => pool.notify());
  pool.start();
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
        const drained = await pool.drain(container.config.shutdownDrainMs);
        if (!drained) {
          container.log.warn("Released unfinished jobs at shutdown");
        }
      },
    },
  ];
}

// The one place tests build the app's worker pool from a container (every
// job kind the program runs), so a change to the pool or the registry is
// adapted here once.
import type { Container } from "../../src/container.ts";
import { WorkerPool } from "../../src/jobs/worker_pool.ts";
import { createJobHandlers } from "../../src/jobs/registry.ts";
import { createLogger } from "../../src/log.ts";

/** A pool over every job kind, on the container's database and clock. */
export function appWorkerPool(
  container: Container,
  opts: { concurrency?: number; pollMs?: number } = {},
): WorkerPool {
  return new WorkerPool({
    db: container.db,
    clock: container.clock,
    log: createLogger("silent"),
    handlers: createJobHandlers(container),
    concurrency: opts.concurrency ?? 8,
    pollMs: opts.pollMs ?? 10,
  });
}

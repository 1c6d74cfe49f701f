/**
 * The parts of the program imported on first use: route groups
 * (http/lazy_routes.ts), job handlers (jobs/registry.ts), the S3 store and
 * the modules a few routes load. Run with --unstable-lazy-dynamic-imports,
 * as `deno task start` runs it, Deno reads such a module from disk when it
 * is first imported, so a build replaced or deleted under a running server
 * (a rebuild of dist/server in place) makes that import fail. It is the
 * program's fault, not the request's or the job's: the request gets a 503
 * instead of a 500 (the spec's one 5xx body; the log says which part), the
 * job goes back without spending an attempt (registry.ts), and /readyz and
 * /healthz answer 503 until the process is restarted on an intact build.
 */
import { AppError, coerceError } from "./errors.ts";
import type { Logger } from "./log.ts";

export class ProgramParts {
  readonly #log: Logger;
  readonly #failed = new Set<string>();

  constructor(log: Logger) {
    this.#log = log;
  }

  /** Whether a part failed to load on its last try (the process needs a restart). */
  get broken(): boolean {
    return this.#failed.size > 0;
  }

  /**
   * `load` as a part loaded once: each call answers the same promise, and
   * after a failure the next call tries again.
   */
  once<T>(part: string, load: () => Promise<T>): () => Promise<T> {
    return loadOnce(() => this.load(part, load));
  }

  /** Runs `load` (an import); its failure marks the process broken. */
  async load<T>(part: string, load: () => Promise<T>): Promise<T> {
    try {
      const loaded = await load();
      // It loaded on a later try: the files are back.
      if (this.#failed.size > 0) this.#failed.delete(part);
      return loaded;
    } catch (err) {
      if (!this.#failed.has(part)) {
        this.#failed.add(part);
        this.#log.error(
          "A part of the program cannot be loaded: restart the server on an intact build",
          { part, error: coerceError(err).message },
        );
      }
      const missing = new AppError(
        "SERVICE_UNAVAILABLE",
        "The server cannot serve this now: a part of its program is missing; it needs a restart",
        { retryable: true, cause: err },
      );
      thrown.add(missing);
      throw missing;
    }
  }
}

/**
 * `load` run once: each call answers the same promise, and after a failure
 * the next call runs it again (the files may be back).
 */
export function loadOnce<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    loading ??= load().catch((err) => {
      loading = undefined;
      throw err;
    });
}

const thrown = new WeakSet<object>();

/** Whether `err` is a part's failure to load (a job's handler gives the job back for it). */
export function isPartMissing(err: unknown): boolean {
  return typeof err === "object" && err !== null && thrown.has(err);
}

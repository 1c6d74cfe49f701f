import {
  type AtomicDeps,
  type AtomicUnit,
  commitBatch,
  runAtomic,
  WriteBatch,
} from "./atomic.ts";

interface Queued {
  unit: AtomicUnit<unknown, unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** Units written in one batch at most. */
const MAX_UNITS = 64;

/**
 * The group commit of libSQL: atomic units (src/db/atomic.ts) that arrive
 * while a batch is on its way are written together in the next one: each
 * unit's reads (all at once), then every unit's writes in one batch request,
 * so N concurrent sends cost one write request, not N, and never an
 * interactive transaction. When that batch fails (a guard found something
 * changed, a constraint, a statement's error), each of its units runs again
 * alone (reads, then its own batch, retried on a conflict), so one bad unit
 * fails alone. Live units go first.
 */
export class BatchCommit {
  readonly #deps: AtomicDeps;
  #live: Queued[] = [];
  #other: Queued[] = [];
  #running = false;
  /** Batches sent, units in them, units run again alone. */
  readonly stats = { batches: 0, units: 0, alone: 0 };

  constructor(deps: AtomicDeps) {
    this.#deps = deps;
  }

  /** Runs `unit` in the next batch; resolves once it is committed. */
  run<P, T>(
    unit: AtomicUnit<P, T>,
    options: { live?: boolean } = {},
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      (options.live ? this.#live : this.#other).push({
        unit: unit as AtomicUnit<unknown, unknown>,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      if (!this.#running) {
        this.#running = true;
        // The units of this turn of the event loop join the first batch.
        setTimeout(() => this.#drain(), 0);
      }
    });
  }

  async #drain(): Promise<void> {
    try {
      while (this.#live.length + this.#other.length > 0) {
        const group = this.#live.splice(0, MAX_UNITS);
        group.push(...this.#other.splice(0, MAX_UNITS - group.length));
        await this.#commit(group);
      }
    } finally {
      this.#running = false;
    }
  }

  async #commit(group: Queued[]): Promise<void> {
    this.stats.batches++;
    this.stats.units += group.length;
    const planned = await Promise.allSettled(
      group.map((item) => item.unit.read(this.#deps.db)),
    );
    const batch = new WriteBatch(this.#deps.db);
    const parts: { item: Queued; finish: (a: never[]) => unknown }[] = [];
    const failed: { item: Queued; err: unknown }[] = [];
    group.forEach((item, i) => {
      const plan = planned[i]!;
      if (plan.status === "rejected") {
        failed.push({ item, err: plan.reason });
        return;
      }
      const from = batch.queries.length;
      try {
        const finish = item.unit.write(plan.value, batch);
        parts.push({ item, finish });
      } catch (err) {
        batch.queries.length = from;
        failed.push({ item, err });
      }
    });
    for (const { item, err } of failed) item.reject(err);
    if (parts.length === 0) return;
    let answers;
    try {
      answers = await commitBatch(this.#deps, batch.queries);
    } catch {
      // One unit's statement or guard failed the batch: each alone now.
      this.stats.alone += parts.length;
      await Promise.all(parts.map(async ({ item }) => {
        try {
          item.resolve(await runAtomic(this.#deps, item.unit));
        } catch (err) {
          item.reject(err);
        }
      }));
      return;
    }
    // A unit's finish reads its answers by the indexes batch.add() gave it:
    // places in the whole batch, not in its own part of it.
    for (const { item, finish } of parts) {
      try {
        item.resolve(finish(answers as never[]));
      } catch (err) {
        item.reject(err);
      }
    }
  }
}

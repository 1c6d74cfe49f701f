/**
 * Writes that arrive together as one unit of the group commit, with the
 * statements of many written at once (one multi-row update instead of one
 * each). A unit that fails (a constraint, a lost connection) is rolled back
 * whole and each of its items is written again alone, so one bad item fails
 * only itself. Every item's promise settles after its commit.
 */
import type { Executor } from "../../db/schema.ts";
import type { GroupCommit, RunOptions } from "../../db/group_commit.ts";

interface Queued<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

export class RecordBatcher<I, R> {
  #commits: Pick<GroupCommit, "run">;
  #write: (trx: Executor, items: I[]) => Promise<R[]>;
  #options: RunOptions;
  #queue: Queued<I, R>[] = [];
  /** A unit is queued in the group commit and has not taken the queue yet. */
  #scheduled = false;

  constructor(
    commits: Pick<GroupCommit, "run">,
    write: (trx: Executor, items: I[]) => Promise<R[]>,
    options: RunOptions = {},
  ) {
    this.#commits = commits;
    this.#write = write;
    this.#options = options;
  }

  /** Writes `item` with the others of its unit; resolves with its result once committed. */
  add(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#scheduled) return;
      this.#scheduled = true;
      void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    let taken: Queued<I, R>[] | undefined;
    let results: R[];
    try {
      results = await this.#commits.run(async (trx) => {
        // Taken when the unit runs: everything that arrived meanwhile joins.
        taken = this.#take();
        return await this.#write(trx, taken.map((q) => q.item));
      }, this.#options);
    } catch {
      // Nothing of the unit is stored; each item again on its own.
      for (const q of taken ?? this.#take()) this.#alone(q);
      return;
    }
    taken!.forEach((q, i) => q.resolve(results[i]!));
  }

  #take(): Queued<I, R>[] {
    this.#scheduled = false;
    return this.#queue.splice(0);
  }

  #alone(q: Queued<I, R>): void {
    this.#commits.run(
      async (trx) => (await this.#write(trx, [q.item]))[0]!,
      this.#options,
    ).then(q.resolve, q.reject);
  }
}

/**
 * The batcher of each group commit (keyed by `deps.commits`), made by `make`
 * on first use: the writes of one container share it.
 */
export function batcherOf<D extends { commits: object }, I, R>(
  make: (deps: D) => RecordBatcher<I, R>,
): (deps: D) => RecordBatcher<I, R> {
  const made = new WeakMap<object, RecordBatcher<I, R>>();
  return (deps) => {
    let batcher = made.get(deps.commits);
    if (!batcher) {
      batcher = make(deps);
      made.set(deps.commits, batcher);
    }
    return batcher;
  };
}

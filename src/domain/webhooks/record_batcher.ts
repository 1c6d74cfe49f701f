/**
 * Writes that arrive together as one unit of the group commit, with the
 * statements of many written at once (one multi-row update instead of one
 * each). A unit that fails (a constraint, a lost connection, a guard that
 * kept failing) is rolled back whole and each of its items is written again
 * alone, so one bad item fails only itself. Every item's promise settles
 * after its commit.
 *
 * A writer is a plan (src/db/planned_writes.ts): it reads, then records its
 * writes; on libSQL the units of one moment go in one write batch, never an
 * interactive transaction; on embedded SQLite in the group transaction.
 */
import type { Executor } from "../../db/schema.ts";
import type { Answers, PlannedWrites } from "../../db/planned_writes.ts";
import type { GroupCommit, RunOptions } from "../../db/group_commit.ts";

interface Queued<I, R> {
  item: I;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

/**
 * Reads what items need and records their writes (GroupCommit.runPlanned);
 * planned again, with the same items, when a guard found a read changed.
 */
export interface PlanWriter<I, R> {
  plan: (
    db: Executor,
    writes: PlannedWrites,
    items: I[],
  ) => Promise<(answers: Answers) => R[]>;
}

export class RecordBatcher<I, R> {
  #commits: Pick<GroupCommit, "runPlanned">;
  #write: PlanWriter<I, R>;
  #options: RunOptions;
  #queue: Queued<I, R>[] = [];
  /** A unit is queued in the group commit and has not taken the queue yet. */
  #scheduled = false;

  constructor(
    commits: Pick<GroupCommit, "runPlanned">,
    write: PlanWriter<I, R>,
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
      // Taken when the unit runs: everything that arrived meanwhile joins.
      results = await this.#run(
        () => (taken ??= this.#take()).map((q) => q.item),
      );
    } catch {
      // Nothing of the unit is stored; each item again on its own.
      for (const q of taken ?? this.#take()) this.#alone(q);
      return;
    }
    taken!.forEach((q, i) => q.resolve(results[i]!));
  }

  /** Runs one unit of the items `items()` gives when the unit starts. */
  #run(items: () => I[]): Promise<R[]> {
    // A unit planned again (a guard failed) keeps the items it took.
    return this.#commits.runPlanned(
      (db, writes) => this.#write.plan(db, writes, items()),
      this.#options,
    );
  }

  #take(): Queued<I, R>[] {
    this.#scheduled = false;
    return this.#queue.splice(0);
  }

  #alone(q: Queued<I, R>): void {
    this.#run(() => [q.item]).then((r) => q.resolve(r[0]!), q.reject);
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

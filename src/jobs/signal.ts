/** Lanes (priorities) of new jobs, when known; undefined means "any lane". */
export type NewJobLanes = ReadonlySet<number> | undefined;

/** A wake-up hint from writers to the worker pools: "new jobs exist" (in these lanes). */
export class JobSignal {
  #listeners = new Set<(lanes: NewJobLanes) => void>();

  /** Wakes the pools that serve one of `lanes` (every pool without it). */
  notify(lanes?: Iterable<number>): void {
    const set = lanes === undefined ? undefined : new Set(lanes);
    for (const listener of this.#listeners) listener(set);
  }

  subscribe(listener: (lanes: NewJobLanes) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

/** True when a pool serving `served` should wake for new jobs in `lanes`. */
export function concerns(served: readonly number[], lanes: NewJobLanes) {
  return lanes === undefined || served.some((lane) => lanes.has(lane));
}

/** A wake-up hint from writers (request handlers) to the worker pool: "new jobs exist". */
export class JobSignal {
  #listeners = new Set<() => void>();

  notify(): void {
    for (const listener of this.#listeners) listener();
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

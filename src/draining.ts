/**
 * Whether this process is shutting down: set first on SIGTERM, so /readyz
 * answers 503 while the server still serves, and what must end before the
 * HTTP server can (long-lived responses such as event streams) is told to.
 */
export class Draining {
  #active = false;
  readonly #listeners = new Set<() => void>();

  get active(): boolean {
    return this.#active;
  }

  /** Starts draining (once) and calls every listener. */
  start(): void {
    if (this.#active) return;
    this.#active = true;
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch { /* a listener's failure must not stop the shutdown */ }
    }
    this.#listeners.clear();
  }

  /** Calls `listener` when draining starts (at once if it has); returns its removal. */
  onStart(listener: () => void): () => void {
    if (this.#active) {
      listener();
      return () => {};
    }
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}

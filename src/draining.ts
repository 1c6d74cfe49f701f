/**
 * Whether this process is shutting down: set first on SIGTERM, so /readyz
 * answers 503 while the server still serves (src/lifecycle.ts).
 */
export class Draining {
  #active = false;

  get active(): boolean {
    return this.#active;
  }

  /** Starts draining (once). */
  start(): void {
    this.#active = true;
  }
}

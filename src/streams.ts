/** A response that stays open (a panel event stream) until told to close. */
export interface OpenStream {
  close(): void;
  /** Settles once the stream has ended. */
  ended: Promise<void>;
}

/**
 * The long-lived responses of this process. Shutdown closes them before the
 * HTTP server drains (src/lifecycle.ts): the server waits for every response
 * to end, and an event stream never would.
 */
export class OpenStreams {
  readonly #open = new Set<OpenStream>();
  #closing = false;

  /** Whether shutdown began: new streams are refused. */
  get closing(): boolean {
    return this.#closing;
  }

  get size(): number {
    return this.#open.size;
  }

  /** Tracks a stream until it ends. */
  add(stream: OpenStream): void {
    this.#open.add(stream);
    stream.ended.then(() => this.#open.delete(stream));
  }

  /** Closes every stream and refuses new ones; resolves once all have ended. */
  async closeAll(): Promise<void> {
    this.#closing = true;
    const all = [...this.#open];
    for (const stream of all) stream.close();
    await Promise.all(all.map((s) => s.ended));
  }
}

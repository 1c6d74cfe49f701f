import { EgressError } from "./errors.ts";

interface Closable {
  close(): void;
}

/**
 * One timer for a whole exchange. When it fires, or the caller's signal
 * aborts, it closes the socket in use, aborts `signal` (for Deno.connect)
 * and rejects `expired`, so a request never outlives its deadline however
 * the peer misbehaves.
 */
export class Deadline {
  /** Rejects with the deadline's error when it fires; never resolves. */
  readonly expired: Promise<never>;
  #error: EgressError | null = null;
  /** Made when a dial asks for the signal: a request on a pooled socket never does. */
  #controller: AbortController | null = null;
  #timer: ReturnType<typeof setTimeout>;
  #reject!: (err: EgressError) => void;
  #held: Closable | null = null;
  #external: AbortSignal | undefined;
  #onAbort = (): void =>
    this.#fail(
      new EgressError(
        "timeout",
        "Request was aborted before a complete response",
      ),
    );

  constructor(timeoutMs: number, external?: AbortSignal) {
    this.expired = new Promise<never>((_, reject) => {
      this.#reject = reject;
    });
    this.expired.catch(() => {});
    this.#timer = setTimeout(
      () =>
        this.#fail(
          new EgressError(
            "timeout",
            `No complete response within ${timeoutMs} ms`,
          ),
        ),
      timeoutMs,
    );
    this.#external = external;
    external?.addEventListener("abort", this.#onAbort, { once: true });
  }

  /** Aborted when the deadline fires (for Deno.connect). */
  get signal(): AbortSignal {
    this.#controller ??= new AbortController();
    if (this.#error !== null) this.#controller.abort(this.#error);
    return this.#controller.signal;
  }

  /** The error it fired with, or null while time remains. */
  get error(): EgressError | null {
    return this.#error;
  }

  /** Closes `resource` when the deadline fires; if it already has, closes it now and throws. */
  hold(resource: Closable): void {
    if (this.#error !== null) {
      closeQuietly(resource);
      throw this.#error;
    }
    this.#held = resource;
  }

  /** Stops holding the current resource (it outlives the exchange, e.g. in the pool). */
  release(): void {
    this.#held = null;
  }

  /** Clears the timer and the abort listener; call once the exchange is over. */
  dispose(): void {
    clearTimeout(this.#timer);
    this.#external?.removeEventListener("abort", this.#onAbort);
    this.#held = null;
  }

  #fail(err: EgressError): void {
    if (this.#error !== null) return;
    this.#error = err;
    clearTimeout(this.#timer);
    this.#controller?.abort(err);
    const held = this.#held;
    this.#held = null;
    if (held !== null) closeQuietly(held);
    this.#reject(err);
  }
}

function closeQuietly(resource: Closable): void {
  try {
    resource.close();
  } catch {
    // Already closed.
  }
}

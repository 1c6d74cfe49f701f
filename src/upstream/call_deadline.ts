/**
 * One call's timeout, cleared when the call is over. AbortSignal.timeout()
 * cannot be cleared: its timer kept the signal, and through fetch's abort
 * listener the request and response, alive for the whole 15 s after every
 * call (so they outlived young-generation collections and were promoted),
 * then fired into the finished fetch, building a DOMException and its stack
 * trace; AbortSignal.any() added a dependent to the caller's long-lived
 * signal each time. Aborts with the reasons those two gave: a TimeoutError
 * DOMException, or the caller's own reason.
 */
export class CallDeadline {
  readonly #controller = new AbortController();
  readonly #timer: ReturnType<typeof setTimeout>;
  readonly #outer: AbortSignal | undefined;
  #timedOut = false;
  readonly #onAbort = () => this.#controller.abort(this.#outer!.reason);

  constructor(ms: number, outer: AbortSignal | undefined) {
    this.#timer = setTimeout(() => {
      this.#timedOut = true;
      this.#controller.abort(
        new DOMException("Signal timed out.", "TimeoutError"),
      );
    }, ms);
    this.#outer = outer;
    if (outer?.aborted) this.#onAbort();
    else outer?.addEventListener("abort", this.#onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  get timedOut(): boolean {
    return this.#timedOut;
  }

  /** Clears the timer and the caller's listener; the call is over. */
  end(): void {
    clearTimeout(this.#timer);
    this.#outer?.removeEventListener("abort", this.#onAbort);
  }
}

/** Time source; tests inject their own. */
export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

/** A clock that only moves when told to (tests, simulations). */
export class ManualClock implements Clock {
  #ms: number;
  constructor(start: Date | string = "2026-11-20T12:00:00.000Z") {
    this.#ms = new Date(start).getTime();
  }
  now(): Date {
    return new Date(this.#ms);
  }
  advance(ms: number): void {
    this.#ms += ms;
  }
  set(date: Date | string): void {
    this.#ms = new Date(date).getTime();
  }
}

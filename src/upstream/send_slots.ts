/**
 * Send slots: times, one send interval apart, at which a channel (a phone
 * number) may send one message. Whoever hands them out hands each time out
 * once, so every sender of a number, in this process or in other instances,
 * sends on its own slot and the number's sends stay evenly paced overall.
 */
export interface SlotSource {
  /**
   * Reserves `count` consecutive slots `intervalMs` apart for `channelId`,
   * from the later of now and the channel's next free slot; resolves with
   * the first slot's time on this process's clock (ms since the epoch).
   */
  reserve(
    channelId: string,
    count: number,
    intervalMs: number,
    nowMs: number,
  ): Promise<number>;
  /** No slot of `channelId` is handed out before `untilMs` (the upstream throttled it). */
  pauseUntil(channelId: string, untilMs: number): Promise<void>;
}

/** Slots handed out by this process alone (embedded SQLite: one process sends). */
export class MemorySlots implements SlotSource {
  readonly #next = new Map<string, number>();

  reserve(
    channelId: string,
    count: number,
    intervalMs: number,
    nowMs: number,
  ): Promise<number> {
    const start = Math.max(this.#next.get(channelId) ?? 0, nowMs);
    this.#next.set(channelId, start + count * intervalMs);
    return Promise.resolve(start);
  }

  pauseUntil(channelId: string, untilMs: number): Promise<void> {
    this.#next.set(
      channelId,
      Math.max(this.#next.get(channelId) ?? 0, untilMs),
    );
    return Promise.resolve();
  }
}

/**
 * What the upstream may see as one second's worth: `rate` sends are spread
 * over 1 s plus this margin, so two sends `rate` apart always leave the
 * sender more than a second apart even when one of them is late (see
 * LATE_MS) and the network delays the earlier more than the later: a strict
 * sliding-window limit at the upstream never sees more than `rate`.
 */
export const SPREAD_MARGIN_MS = 40;
/** A slot is used at most this long after its time; a later one is dropped (a paused or starved process). */
export const LATE_MS = 15;

/** The interval between a channel's slots at `rate` sends per second. */
export function slotIntervalMs(rate: number): number {
  return (1000 + SPREAD_MARGIN_MS) / rate;
}

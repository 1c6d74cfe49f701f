import { AppError } from "../errors.ts";
import {
  LATE_MS,
  MemorySlots,
  slotIntervalMs,
  type SlotSource,
} from "./send_slots.ts";

export type SendLane = "live" | "batch";

/** Meta's rate for a number at throughput level HIGH (reference meta-management.md §3.2). */
export const HIGH_THROUGHPUT_RATE = 1_000;
/** Meta's fixed rate for a number shared with the WhatsApp Business app (coexistence). */
export const BIZ_APP_RATE = 20;

/** What the rate of a number depends on (a Channel will do). */
export interface RatedNumber {
  /** The operator's explicit rate (`--send-rate`); null for none. */
  sendRate: number | null;
  /** `throughput.level` as Meta last reported it. */
  throughputLevel: string | null;
  onBizApp: boolean;
}

/**
 * Messages per second for one number: the operator's explicit rate, else
 * 1,000 (capped by `maxRate`, SEND_RATE_MAX) for throughput level HIGH,
 * else 20 for a number shared with the WhatsApp Business app, else
 * `defaultRate` (SEND_RATE_PER_SECOND, 80). Pure, so wherever the governor
 * lives can call it.
 */
export function sendRateOf(
  number: RatedNumber,
  limits: { defaultRate: number; maxRate: number },
): number {
  if (number.sendRate !== null) return number.sendRate;
  if (number.throughputLevel?.toUpperCase() === "HIGH") {
    return Math.min(HIGH_THROUGHPUT_RATE, limits.maxRate);
  }
  if (number.onBizApp) return BIZ_APP_RATE;
  return limits.defaultRate;
}

/** The timer the governor schedules wake-ups with; tests inject a fake one. */
export interface GovernorTimer {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface SendGovernorOptions {
  defaultRatePerSecond: number;
  /** SEND_RATE_MAX: the rate a HIGH throughput level gives is capped by it. @default 1000 */
  maxRatePerSecond?: number;
  clock?: { now(): Date };
  timer?: GovernorTimer;
  /** Who hands out send slots: this process (the default) or the database (several instances). */
  slots?: SlotSource;
  /** Slots reserved at a time at most; default a tenth of a second's worth. */
  block?: number;
}

interface Waiter {
  /** With the slot's time (ms since the epoch on this process's clock). */
  resolve(slot: number): void;
  reject(reason: unknown): void;
  detach(): void;
}

interface Channel {
  id: string;
  rate: number;
  /** Slots held, ascending (ms on this process's clock). */
  slots: number[];
  /** A reservation is on its way. */
  reserving: boolean;
  pausedUntil: number;
  live: Waiter[];
  batch: Waiter[];
  timer: unknown;
  timerAt: number;
}

const systemTimer: GovernorTimer = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as number),
};

/**
 * Paces sends per channel on send slots (src/upstream/send_slots.ts): each
 * send takes the next slot of its channel, one send interval after the one
 * before whoever sent it, so a number never gets more than its rate in any
 * sliding second, from this process or from all instances together (when
 * the slots come from the database). No burst: a channel idle for a while
 * sends its next message at once, then one per interval. Live sends always
 * go before batch sends. Slots are reserved a block at a time, only for
 * sends that wait; one not used within LATE_MS of its time is dropped.
 * **Invariant:** a channel has waiters only while it holds no due slot, and
 * at most one timer.
 */
export class SendGovernor {
  /** What sendRateOf() needs besides the number. */
  readonly limits: { defaultRate: number; maxRate: number };
  #defaultRate: number;
  #clock: { now(): Date };
  #timer: GovernorTimer;
  #source: SlotSource;
  #block: number | undefined;
  #channels = new Map<string, Channel>();

  constructor(opts: SendGovernorOptions) {
    this.#defaultRate = checkRate(opts.defaultRatePerSecond);
    this.limits = {
      defaultRate: this.#defaultRate,
      maxRate: checkRate(opts.maxRatePerSecond ?? HIGH_THROUGHPUT_RATE),
    };
    this.#clock = opts.clock ?? { now: () => new Date() };
    this.#timer = opts.timer ?? systemTimer;
    this.#source = opts.slots ?? new MemorySlots();
    this.#block = opts.block;
  }

  /** Resolves when this channel may send one message; rejects with the signal's reason if aborted. */
  acquire(
    channelId: string,
    opts: {
      lane: SendLane;
      ratePerSecond?: number | null;
      signal?: AbortSignal;
    },
  ): Promise<void> {
    return this.acquireSlot(channelId, opts).then(() => {});
  }

  /** As acquire(), resolving with the time of the slot granted (ms since the epoch, this process's clock). */
  acquireSlot(
    channelId: string,
    opts: {
      lane: SendLane;
      ratePerSecond?: number | null;
      signal?: AbortSignal;
    },
  ): Promise<number> {
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    const channel = this.#channel(channelId, opts.ratePerSecond);
    return new Promise<number>((resolve, reject) => {
      const queue = opts.lane === "live" ? channel.live : channel.batch;
      const signal = opts.signal;
      const onAbort = () => {
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        reject(signal!.reason);
        this.#schedule(channel);
      };
      const waiter: Waiter = {
        resolve,
        reject,
        detach: () => signal?.removeEventListener("abort", onAbort),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      queue.push(waiter);
      this.#pump(channelId, channel);
    });
  }

  /** Upstream throttled us (130429 etc.): no sends on this channel until now + ms, here or elsewhere. */
  pause(channelId: string, ms: number): void {
    const channel = this.#channel(channelId, undefined);
    const until = this.#now() + Math.max(0, ms);
    if (until <= channel.pausedUntil) return;
    channel.pausedUntil = until;
    channel.slots = channel.slots.filter((at) => at >= until);
    this.#source.pauseUntil(channelId, until).catch(() => {
      // This process keeps the pause; others learn of it from their own 130429.
    });
    this.#pump(channelId, channel);
  }

  stats(
    channelId: string,
  ): { waitingLive: number; waitingBatch: number; pausedUntil: Date | null } {
    const channel = this.#channels.get(channelId);
    const paused = channel && channel.pausedUntil > this.#now();
    return {
      waitingLive: channel?.live.length ?? 0,
      waitingBatch: channel?.batch.length ?? 0,
      pausedUntil: paused ? new Date(channel.pausedUntil) : null,
    };
  }

  #channel(
    channelId: string,
    ratePerSecond: number | null | undefined,
  ): Channel {
    const rate = ratePerSecond == null
      ? this.#defaultRate
      : checkRate(ratePerSecond);
    let channel = this.#channels.get(channelId);
    if (!channel) {
      channel = {
        id: channelId,
        rate,
        slots: [],
        reserving: false,
        pausedUntil: 0,
        live: [],
        batch: [],
        timer: undefined,
        timerAt: 0,
      };
      this.#channels.set(channelId, channel);
    } else if (ratePerSecond != null && rate !== channel.rate) {
      channel.rate = rate;
    }
    return channel;
  }

  /** Hands out every due slot, reserves more for the sends still waiting, arms the timer. */
  #pump(channelId: string, channel: Channel): void {
    const now = this.#now();
    // A slot passed by more than LATE_MS (a paused process) is never used.
    while (channel.slots.length > 0 && channel.slots[0]! < now - LATE_MS) {
      channel.slots.shift();
    }
    while (
      channel.slots.length > 0 && channel.slots[0]! <= now &&
      channel.slots[0]! >= channel.pausedUntil &&
      (channel.live.length > 0 || channel.batch.length > 0)
    ) {
      const slot = channel.slots.shift()!;
      const waiter = (channel.live.shift() ?? channel.batch.shift())!;
      waiter.detach();
      waiter.resolve(slot);
    }
    const waiting = channel.live.length + channel.batch.length;
    if (waiting > channel.slots.length && !channel.reserving) {
      this.#reserve(channelId, channel, waiting - channel.slots.length, now);
    }
    this.#schedule(channel);
  }

  #reserve(
    channelId: string,
    channel: Channel,
    wanted: number,
    now: number,
  ): void {
    const interval = slotIntervalMs(channel.rate);
    const block = this.#block ?? Math.max(1, Math.ceil(channel.rate / 10));
    const count = Math.min(wanted, block);
    channel.reserving = true;
    this.#source.reserve(
      channelId,
      count,
      interval,
      Math.max(now, channel.pausedUntil),
    ).then((start) => {
      for (let i = 0; i < count; i++) {
        const at = start + i * interval;
        // A pause that came meanwhile: its slots are not used.
        if (at >= channel.pausedUntil) channel.slots.push(at);
      }
      channel.slots.sort((a, b) => a - b);
    }, (err) => {
      // The database is unreachable: the waiters' jobs fail and are retried.
      const waiters = [...channel.live.splice(0), ...channel.batch.splice(0)];
      for (const waiter of waiters) {
        waiter.detach();
        waiter.reject(err);
      }
    }).finally(() => {
      channel.reserving = false;
      this.#pump(channelId, channel);
    });
  }

  #schedule(channel: Channel): void {
    const waiting = channel.live.length + channel.batch.length;
    const next = channel.slots[0];
    if (waiting === 0 || next === undefined) {
      this.#cancelTimer(channel);
      return;
    }
    const now = this.#now();
    const wakeAt = Math.max(next, channel.pausedUntil);
    // An earlier timer is harmless (it pumps and re-arms); a later one would delay a grant.
    if (channel.timer !== undefined && channel.timerAt <= wakeAt) return;
    this.#cancelTimer(channel);
    const delay = Math.max(0, Math.ceil(wakeAt - now));
    channel.timerAt = now + delay;
    channel.timer = this.#timer.setTimeout(() => {
      channel.timer = undefined;
      this.#pump(channel.id, channel);
    }, delay);
  }

  #cancelTimer(channel: Channel): void {
    if (channel.timer === undefined) return;
    this.#timer.clearTimeout(channel.timer);
    channel.timer = undefined;
  }

  #now(): number {
    return this.#clock.now().getTime();
  }
}

function checkRate(rate: number): number {
  if (!Number.isFinite(rate) || rate <= 0) {
    throw new AppError(
      "VALIDATION_ERROR",
      `Invalid send rate "${rate}": must be a positive number of messages per second`,
    );
  }
  return rate;
}

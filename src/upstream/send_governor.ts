import { AppError } from "../errors.ts";

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
  /** Tokens a channel may bank; default = its rate, i.e. one second of burst. */
  burst?: number;
  timer?: GovernorTimer;
}

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  detach(): void;
}

interface Channel {
  rate: number;
  tokens: number;
  /** Time tokens were last added up to (ms); may lie in the future while paused. */
  refilledAt: number;
  pausedUntil: number;
  live: Waiter[];
  batch: Waiter[];
  timer: unknown;
  timerAt: number;
}

// Float refills land a hair under a whole token; this keeps a due grant from waiting one more tick.
const EPSILON = 1e-9;

const systemTimer: GovernorTimer = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as number),
};

/**
 * Paces sends per channel with a token bucket; live sends always go before batch sends.
 * **Invariant:** a channel has waiters only while it has no whole token (or is paused), and at most one timer.
 */
export class SendGovernor {
  /** What sendRateOf() needs besides the number. */
  readonly limits: { defaultRate: number; maxRate: number };
  #defaultRate: number;
  #burst: number | undefined;
  #clock: { now(): Date };
  #timer: GovernorTimer;
  #channels = new Map<string, Channel>();

  constructor(opts: SendGovernorOptions) {
    this.#defaultRate = checkRate(opts.defaultRatePerSecond);
    this.limits = {
      defaultRate: this.#defaultRate,
      maxRate: checkRate(opts.maxRatePerSecond ?? HIGH_THROUGHPUT_RATE),
    };
    if (opts.burst !== undefined && !(opts.burst >= 1)) {
      throw new AppError(
        "VALIDATION_ERROR",
        `Invalid send burst "${opts.burst}": must be at least 1`,
      );
    }
    this.#burst = opts.burst;
    this.#clock = opts.clock ?? { now: () => new Date() };
    this.#timer = opts.timer ?? systemTimer;
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
    if (opts.signal?.aborted) return Promise.reject(opts.signal.reason);
    const channel = this.#channel(channelId, opts.ratePerSecond);
    const now = this.#now();
    this.#refill(channel, now);
    const ahead = opts.lane === "live"
      ? channel.live.length
      : channel.live.length + channel.batch.length;
    if (
      ahead === 0 && channel.pausedUntil <= now && channel.tokens >= 1 - EPSILON
    ) {
      channel.tokens -= 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const queue = opts.lane === "live" ? channel.live : channel.batch;
      const signal = opts.signal;
      const onAbort = () => {
        const index = queue.indexOf(waiter);
        if (index >= 0) queue.splice(index, 1);
        reject(signal!.reason);
        this.#schedule(channelId, channel);
      };
      const waiter: Waiter = {
        resolve,
        reject,
        detach: () => signal?.removeEventListener("abort", onAbort),
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      queue.push(waiter);
      this.#schedule(channelId, channel);
    });
  }

  /** Upstream throttled us (130429 etc.): no sends on this channel until now + ms. */
  pause(channelId: string, ms: number): void {
    const channel = this.#channel(channelId, undefined);
    const until = this.#now() + Math.max(0, ms);
    if (until <= channel.pausedUntil) return;
    channel.pausedUntil = until;
    // Nothing banks while paused; one token waits at the end so the first send goes out on time.
    channel.tokens = 1;
    channel.refilledAt = until;
    this.#schedule(channelId, channel);
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
        rate,
        tokens: this.#burst ?? rate,
        refilledAt: this.#now(),
        pausedUntil: 0,
        live: [],
        batch: [],
        timer: undefined,
        timerAt: 0,
      };
      this.#channels.set(channelId, channel);
    } else if (ratePerSecond != null && rate !== channel.rate) {
      this.#refill(channel, this.#now());
      channel.rate = rate;
      channel.tokens = Math.min(channel.tokens, this.#burst ?? rate);
    }
    return channel;
  }

  #refill(channel: Channel, now: number): void {
    if (now <= channel.refilledAt) return;
    const capacity = this.#burst ?? channel.rate;
    channel.tokens = Math.min(
      capacity,
      channel.tokens + ((now - channel.refilledAt) * channel.rate) / 1000,
    );
    channel.refilledAt = now;
  }

  /** Hands out every token that is due, then arms the one timer for the next. */
  #drain(channelId: string, channel: Channel): void {
    const now = this.#now();
    this.#refill(channel, now);
    while (
      channel.pausedUntil <= now && channel.tokens >= 1 - EPSILON &&
      (channel.live.length > 0 || channel.batch.length > 0)
    ) {
      channel.tokens -= 1;
      const waiter = (channel.live.shift() ?? channel.batch.shift())!;
      waiter.detach();
      waiter.resolve();
    }
    this.#schedule(channelId, channel);
  }

  #schedule(channelId: string, channel: Channel): void {
    if (channel.live.length === 0 && channel.batch.length === 0) {
      this.#cancelTimer(channel);
      return;
    }
    const now = this.#now();
    const wakeAt = channel.pausedUntil > now
      ? channel.pausedUntil
      : now + Math.max(0, ((1 - channel.tokens) * 1000) / channel.rate);
    // An earlier timer is harmless (it drains and re-arms); a later one would delay a grant.
    if (channel.timer !== undefined && channel.timerAt <= wakeAt) return;
    this.#cancelTimer(channel);
    const delay = Math.max(0, Math.ceil(wakeAt - now));
    channel.timerAt = now + delay;
    channel.timer = this.#timer.setTimeout(() => {
      channel.timer = undefined;
      this.#drain(channelId, channel);
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

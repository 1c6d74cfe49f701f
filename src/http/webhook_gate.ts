import type { Clock } from "../clock.ts";
import { AppError } from "../errors.ts";

/** Meta's payloads are at most 3 MB (docs/operations.md); no longer body is read. */
export const MAX_WEBHOOK_BYTES = 3 * 1024 * 1024;

export interface WebhookGateLimits {
  /** Bodies read at once before their signature is known, all senders together. */
  maxReads: number;
  /** Bytes those reads may hold (each reserves its Content-Length, or 3 MB when chunked). */
  maxBufferedBytes: number;
  /** After `graceMs`, a body that has arrived slower than this on average is dropped. */
  minBytesPerSecond: number;
  graceMs: number;
  /** A body not read whole within this is dropped (META_WEBHOOK_READ_TIMEOUT_MS). */
  maxReadMs: number;
  /** How long a post waits for a read slot before it is refused. */
  maxWaitMs: number;
  /** Posts waiting at once; more are refused at once. */
  maxWaiting: number;
  /** A read younger than this is never evicted for a newcomer. */
  evictAfterMs: number;
  /**
   * Failed signatures within `windowMs` after which an address is refused
   * unread; only addresses that tell clients apart (TRUSTED_PROXIES).
   */
  blockAfter: number;
  windowMs: number;
  /** Addresses remembered at most (the oldest are forgotten first). */
  maxTracked: number;
  /** How often waiting posts and running reads are looked at. */
  sweepMs: number;
}

export const WEBHOOK_GATE_LIMITS: WebhookGateLimits = {
  maxReads: 16,
  maxBufferedBytes: 16 * 1024 * 1024,
  minBytesPerSecond: 64 * 1024,
  graceMs: 1_000,
  maxReadMs: 10_000,
  maxWaitMs: 2_000,
  maxWaiting: 256,
  evictAfterMs: 100,
  blockAfter: 5,
  windowMs: 60_000,
  maxTracked: 10_000,
  sweepMs: 50,
};

/** Why a read was ended by the gate (the labels of the refusal counter too). */
export type GateDrop = "evicted" | "too_slow" | "timeout";
export type GateRefusal = "blocked" | "full";

/** A read admitted by the gate. */
export interface GateTicket {
  /** Aborted, with the AppError to answer, when the gate drops the read. */
  readonly signal: AbortSignal;
  /** Counts bytes as they arrive (the rate and the buffered total). */
  received(bytes: number): void;
  /** Once, when the signature is known (or the read failed); `failed` counts against the address. */
  done(failed: boolean): void;
}

/** What a post asks of the gate before a byte of its body is read. */
export interface GateRequest {
  address: string;
  /** Whether `address` tells clients apart (resolved through TRUSTED_PROXIES). */
  distinct: boolean;
  /** Bytes to reserve: the Content-Length, or the most a body may have. */
  bytes: number;
}

export interface GateStats {
  reads: number;
  waiting: number;
  reservedBytes: number;
  bufferedBytes: number;
  /** The most bytes ever buffered at once. */
  peakBufferedBytes: number;
}

export interface GateEvents {
  refused?(reason: GateRefusal | GateDrop): void;
}

interface Read extends GateRequest {
  startedMs: number;
  got: number;
  abort: AbortController;
  open: boolean;
}

interface Waiter extends GateRequest {
  sinceMs: number;
  admit(read: Read): void;
  refuse(err: AppError): void;
}

interface Failures {
  count: number;
  sinceMs: number;
}

/** Runs `fn` after `ms` and returns its cancel; tests inject one and sweep by hand on a manual clock. */
export type Schedule = (fn: () => void, ms: number) => () => void;

const timerSchedule: Schedule = (fn, ms) => {
  const id = setTimeout(fn, ms);
  return () => clearTimeout(id);
};

/**
 * Bounds the work spent on bodies whose signature is not known yet, for
 * every sender alike: at most `maxReads` reads holding `maxBufferedBytes`.
 * A post that does not fit waits (up to `maxWaitMs`) instead of being
 * refused, oldest first, and the slowest read older than `evictAfterMs` is
 * evicted to make room for it (see #evictFor); a body that arrives slower
 * than `minBytesPerSecond` after its first second is dropped. So a correctly
 * signed post (Meta's are a few KB and arrive at once) gets in within a
 * sweep or two whatever other senders do. Behind a reverse proxy every post
 * has the proxy's address, so nothing is decided per address unless the
 * address tells clients apart (`distinct`, from TRUSTED_PROXIES): then an
 * address is refused unread after `blockAfter` failed signatures within
 * `windowMs`. No address gets more than the others: one that sent a verified
 * post meets the same bounds.
 */
export class WebhookGate {
  readonly #clock: Clock;
  readonly #limits: WebhookGateLimits;
  readonly #schedule: Schedule;
  readonly #events: GateEvents;
  readonly #reads = new Set<Read>();
  #waiters: Waiter[] = [];
  readonly #failures = new Map<string, Failures>();
  #reserved = 0;
  #buffered = 0;
  #peak = 0;
  /** Cancels the scheduled sweep; set while one is. */
  #cancelSweep: (() => void) | undefined;

  constructor(
    clock: Clock,
    limits: WebhookGateLimits = WEBHOOK_GATE_LIMITS,
    options: { schedule?: Schedule; events?: GateEvents } = {},
  ) {
    this.#clock = clock;
    this.#limits = limits;
    this.#schedule = options.schedule ?? timerSchedule;
    this.#events = options.events ?? {};
  }

  /** Admits one body read, at once or after a wait; throws RATE_LIMITED or SERVICE_UNAVAILABLE. */
  enter(request: GateRequest): Promise<GateTicket> {
    const nowMs = this.#now();
    const blocked = this.#blocked(request, nowMs);
    if (blocked) throw blocked;
    if (this.#waiters.length >= this.#limits.maxWaiting) throw this.#full();
    const { promise, resolve, reject } = Promise.withResolvers<GateTicket>();
    this.#waiters.push({
      ...request,
      bytes: Math.min(request.bytes, this.#limits.maxBufferedBytes),
      sinceMs: nowMs,
      admit: (read) => resolve(this.#ticket(read)),
      refuse: reject,
    });
    this.#pump(nowMs);
    this.#wake();
    return promise;
  }

  /** Drops slow and overdue reads, admits waiting posts, refuses those that waited too long. */
  sweep(): void {
    const nowMs = this.#now();
    const limits = this.#limits;
    for (const read of this.#reads) {
      const ageMs = nowMs - read.startedMs;
      if (ageMs >= limits.maxReadMs) {
        this.#drop(read, "timeout", tooLate(limits.maxReadMs));
      } else if (
        ageMs >= limits.graceMs &&
        read.got < read.bytes &&
        read.got * 1_000 < limits.minBytesPerSecond * ageMs
      ) {
        this.#drop(read, "too_slow", tooSlow(read.got, ageMs, limits));
      }
    }
    this.#pump(nowMs);
    const expired = this.#waiters.filter((w) =>
      nowMs - w.sinceMs >= limits.maxWaitMs
    );
    if (expired.length) {
      this.#waiters = this.#waiters.filter((w) => !expired.includes(w));
      for (const waiter of expired) waiter.refuse(this.#full());
    }
    this.#wake();
  }

  stats(): GateStats {
    return {
      reads: this.#reads.size,
      waiting: this.#waiters.length,
      reservedBytes: this.#reserved,
      bufferedBytes: this.#buffered,
      peakBufferedBytes: this.#peak,
    };
  }

  #now(): number {
    return this.#clock.now().getTime();
  }

  /**
   * Admits waiting posts, oldest first, each that fits or can be made to
   * fit by eviction; one that cannot does not hold back those behind it.
   */
  #pump(nowMs: number): void {
    for (let i = 0; i < this.#waiters.length;) {
      const waiter = this.#waiters[i]!;
      // Its address may have failed enough while it waited.
      const blocked = this.#blocked(waiter, nowMs);
      if (blocked) {
        this.#waiters.splice(i, 1);
        waiter.refuse(blocked);
      } else if (this.#fits(waiter) || this.#evictFor(waiter, nowMs)) {
        this.#waiters.splice(i, 1);
        waiter.admit(this.#start(waiter, nowMs));
      } else i++;
    }
  }

  #fits(request: GateRequest): boolean {
    return this.#reads.size < this.#limits.maxReads &&
      this.#reserved + request.bytes <= this.#limits.maxBufferedBytes;
  }

  /**
   * Evicts reads old enough to be judged, slowest first, if that makes room
   * for `waiter`; else evicts none. A read is evicted for a smaller body, or
   * for anyone once it falls behind the minimum rate (the first second's
   * grace does not protect it from a waiting post), or, for a post about to
   * be refused, whatever its pace: so a body held open costs its sender the
   * slot, while posts of its own size cannot make each other churn.
   */
  #evictFor(waiter: Waiter, nowMs: number): boolean {
    const limits = this.#limits;
    const lastResort = nowMs - waiter.sinceMs >= limits.maxWaitMs;
    const rate = (r: Read) => r.got / Math.max(1, nowMs - r.startedMs);
    const candidates = [...this.#reads]
      .filter((r) =>
        nowMs - r.startedMs >= limits.evictAfterMs &&
        (lastResort || r.bytes > waiter.bytes ||
          rate(r) * 1_000 < limits.minBytesPerSecond)
      )
      .sort((a, b) => rate(a) - rate(b));
    const request = waiter;
    let reads = this.#reads.size;
    let reserved = this.#reserved;
    const victims: Read[] = [];
    for (const read of candidates) {
      if (
        reads < this.#limits.maxReads &&
        reserved + request.bytes <= this.#limits.maxBufferedBytes
      ) break;
      victims.push(read);
      reads--;
      reserved -= read.bytes;
    }
    if (
      reads >= this.#limits.maxReads ||
      reserved + request.bytes > this.#limits.maxBufferedBytes
    ) return false;
    for (const read of victims) {
      this.#drop(
        read,
        "evicted",
        new AppError(
          "SERVICE_UNAVAILABLE",
          "Cannot read webhook body: it was arriving too slowly while other posts waited",
          { retryAfterMs: 1_000 },
        ),
      );
    }
    return true;
  }

  #start(request: GateRequest, nowMs: number): Read {
    const read: Read = {
      address: request.address,
      distinct: request.distinct,
      bytes: request.bytes,
      startedMs: nowMs,
      got: 0,
      abort: new AbortController(),
      open: true,
    };
    this.#reads.add(read);
    this.#reserved += read.bytes;
    return read;
  }

  #ticket(read: Read): GateTicket {
    return {
      signal: read.abort.signal,
      received: (bytes) => {
        if (!read.open) return;
        read.got += bytes;
        this.#buffered += bytes;
        if (this.#buffered > this.#peak) this.#peak = this.#buffered;
      },
      done: (failed) => {
        if (!read.open) return;
        this.#release(read);
        if (read.distinct) {
          if (failed) this.#fail(read.address, this.#now());
          else this.#failures.delete(read.address);
        }
        this.#pump(this.#now());
        this.#wake();
      },
    };
  }

  #release(read: Read): void {
    read.open = false;
    this.#reads.delete(read);
    this.#reserved -= read.bytes;
    this.#buffered -= read.got;
  }

  /** Ends a read the gate gave up on; slow and overdue bodies count as failures of their address. */
  #drop(read: Read, why: GateDrop, err: AppError): void {
    this.#release(read);
    if (read.distinct && why !== "evicted") {
      this.#fail(read.address, this.#now());
    }
    this.#events.refused?.(why);
    read.abort.abort(err);
  }

  #full(): AppError {
    this.#events.refused?.("full");
    return new AppError(
      "SERVICE_UNAVAILABLE",
      "Cannot accept webhook: too many unverified posts at once",
      { retryAfterMs: 1_000 },
    );
  }

  /** Keeps one sweep scheduled while anything is read or waiting, and none once idle. */
  #wake(): void {
    const busy = this.#reads.size > 0 || this.#waiters.length > 0;
    if (!busy) {
      this.#cancelSweep?.();
      this.#cancelSweep = undefined;
    } else if (!this.#cancelSweep) {
      this.#cancelSweep = this.#schedule(() => {
        this.#cancelSweep = undefined;
        this.sweep();
      }, this.#limits.sweepMs);
    }
  }

  /** The refusal for a distinct address with `blockAfter` recent failures, else undefined. */
  #blocked(request: GateRequest, nowMs: number): AppError | undefined {
    if (!request.distinct) return undefined;
    const failures = this.#recentFailures(request.address, nowMs);
    if (!failures || failures.count < this.#limits.blockAfter) return undefined;
    this.#events.refused?.("blocked");
    return new AppError(
      "RATE_LIMITED",
      `Cannot accept webhook: ${failures.count} failed signatures from this address; retry later`,
      { retryAfterMs: failures.sinceMs + this.#limits.windowMs - nowMs },
    );
  }

  #recentFailures(address: string, nowMs: number): Failures | undefined {
    const failures = this.#failures.get(address);
    if (failures && nowMs - failures.sinceMs >= this.#limits.windowMs) {
      this.#failures.delete(address);
      return undefined;
    }
    return failures;
  }

  #fail(address: string, nowMs: number): void {
    const failures = this.#recentFailures(address, nowMs);
    if (failures) {
      failures.count++;
      return;
    }
    if (this.#failures.size >= this.#limits.maxTracked) {
      this.#failures.delete(this.#failures.keys().next().value!);
    }
    this.#failures.set(address, { count: 1, sinceMs: nowMs });
  }
}

function tooLate(maxReadMs: number): AppError {
  return new AppError(
    "VALIDATION_ERROR",
    `Cannot read webhook body: it did not arrive within ${maxReadMs} ms`,
  );
}

function tooSlow(
  got: number,
  ageMs: number,
  limits: WebhookGateLimits,
): AppError {
  return new AppError(
    "VALIDATION_ERROR",
    `Cannot read webhook body: ${got} bytes in ${ageMs} ms is slower than ${limits.minBytesPerSecond} bytes per second`,
  );
}

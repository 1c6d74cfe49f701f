import type { Clock } from "../clock.ts";
import { AppError } from "../errors.ts";

/** Meta's payloads are at most 3 MB (README); no longer body is read. */
export const MAX_WEBHOOK_BYTES = 3 * 1024 * 1024;

export interface WebhookGateLimits {
  /** Bodies read at once before their signature is known, all senders together. */
  maxReads: number;
  /** The same, per sender address. */
  maxReadsPerAddress: number;
  /** The same, for all addresses with a recent failure together. */
  maxSuspectReads: number;
  /** Failures within `windowMs` after which an address is refused unread. */
  blockAfter: number;
  windowMs: number;
  /** How long after a verified post, with no failure since, an address skips the limits. */
  trustMs: number;
  /** Addresses remembered at most (the oldest are forgotten first). */
  maxTracked: number;
}

export const WEBHOOK_GATE_LIMITS: WebhookGateLimits = {
  maxReads: 16,
  maxReadsPerAddress: 4,
  maxSuspectReads: 1,
  blockAfter: 5,
  windowMs: 60_000,
  trustMs: 10 * 60_000,
  maxTracked: 10_000,
};

/** A read admitted by the gate; `done` once, with whether its signature failed. */
export interface GateTicket {
  done(failed: boolean): void;
}

interface Failures {
  count: number;
  sinceMs: number;
}

/**
 * Bounds the work spent on bodies whose signature is not known yet. A body
 * is only known forged after it is read and hashed, so the gate admits or
 * refuses at once, never queues: an address that recently failed shares one
 * small pool and is refused unread after a few failures, so a flood from it
 * costs almost nothing while posts from other addresses (Meta's) keep their
 * own slots. A verified post clears its address's failures, and an address
 * that sent one lately, with no failure since, skips the limits altogether,
 * so a burst from Meta is never refused.
 */
export class WebhookGate {
  readonly #clock: Clock;
  readonly #limits: WebhookGateLimits;
  readonly #failures = new Map<string, Failures>();
  readonly #perAddress = new Map<string, number>();
  /** When each address last sent a verified post. */
  readonly #verified = new Map<string, number>();
  #reads = 0;
  #suspectReads = 0;

  constructor(clock: Clock, limits: WebhookGateLimits = WEBHOOK_GATE_LIMITS) {
    this.#clock = clock;
    this.#limits = limits;
  }

  /** Admits one body read from `address`, or throws RATE_LIMITED / SERVICE_UNAVAILABLE. */
  enter(address: string): GateTicket {
    const limits = this.#limits;
    const nowMs = this.#clock.now().getTime();
    const failures = this.#recentFailures(address, nowMs);
    if (failures && failures.count >= limits.blockAfter) {
      throw new AppError(
        "RATE_LIMITED",
        `Cannot accept webhook: ${failures.count} failed signatures from this address; retry later`,
        { retryAfterMs: failures.sinceMs + limits.windowMs - nowMs },
      );
    }
    const lastVerifiedMs = this.#verified.get(address);
    if (
      !failures && lastVerifiedMs !== undefined &&
      nowMs - lastVerifiedMs < limits.trustMs
    ) {
      // Meta's own addresses: a burst of its posts is never refused.
      return this.#ticket(address, false, false);
    }
    const suspect = failures !== undefined;
    const mine = this.#perAddress.get(address) ?? 0;
    if (
      (suspect && this.#suspectReads >= limits.maxSuspectReads) ||
      mine >= limits.maxReadsPerAddress
    ) {
      throw new AppError(
        "RATE_LIMITED",
        "Cannot accept webhook: too many unverified posts from this address at once",
        { retryAfterMs: 1_000 },
      );
    }
    if (this.#reads >= limits.maxReads) {
      throw new AppError(
        "SERVICE_UNAVAILABLE",
        "Cannot accept webhook: too many unverified posts at once",
        { retryAfterMs: 1_000 },
      );
    }
    this.#reads++;
    if (suspect) this.#suspectReads++;
    this.#perAddress.set(address, mine + 1);
    return this.#ticket(address, true, suspect);
  }

  #ticket(address: string, counted: boolean, suspect: boolean): GateTicket {
    let open = true;
    return {
      done: (failed) => {
        if (!open) return;
        open = false;
        if (counted) {
          this.#reads--;
          if (suspect) this.#suspectReads--;
          const left = (this.#perAddress.get(address) ?? 1) - 1;
          if (left > 0) this.#perAddress.set(address, left);
          else this.#perAddress.delete(address);
        }
        const nowMs = this.#clock.now().getTime();
        if (failed) {
          this.#verified.delete(address);
          this.#fail(address, nowMs);
        } else {
          this.#failures.delete(address);
          this.#verified.delete(address); // re-inserted last: the newest
          remember(this.#verified, address, nowMs, this.#limits.maxTracked);
        }
      },
    };
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
    if (failures) failures.count++;
    else {
      remember(
        this.#failures,
        address,
        { count: 1, sinceMs: nowMs },
        this.#limits.maxTracked,
      );
    }
  }
}

/** Sets a key in a map kept to `max` entries by forgetting the oldest. */
function remember<V>(map: Map<string, V>, key: string, value: V, max: number) {
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** The key a sender is tracked by: its IPv4 address, or the /64 of an IPv6 one. */
export function senderKey(hostname: string | undefined): string {
  if (!hostname) return "unknown";
  const ip = hostname.replace(/^::ffff:(?=\d+\.)/i, "").replace(/%.*$/, "");
  if (!ip.includes(":")) return ip;
  const [head = "", tail = ""] = ip.toLowerCase().split("::");
  const left = head ? head.split(":") : [];
  const right = tail ? tail.split(":") : [];
  const groups = [
    ...left,
    ...Array(Math.max(0, 8 - left.length - right.length)).fill("0"),
    ...right,
  ];
  return groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, "")).join(":") +
    "::/64";
}

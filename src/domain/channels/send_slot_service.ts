import type { Db } from "../../db/schema.ts";
import type { SlotSource } from "../../upstream/send_slots.ts";
import { pauseSendSlots, reserveSendSlots } from "./send_slot_repo.ts";

/**
 * Send slots handed out by the database, for instances on one libSQL server:
 * one statement reserves a block of a channel's slots, so the slots of all
 * instances never overlap and a number stays at its rate whatever the number
 * of instances. Times are the database's: each reservation also reads its
 * clock, so the slots are moved onto this process's clock (to within half a
 * round trip) whatever the skew between machines.
 */
/** Reservations whose clock samples are kept (see DbSlots.#samples). */
const CLOCK_SAMPLES = 16;

export class DbSlots implements SlotSource {
  readonly #db: Db;
  readonly #now: () => number;
  /**
   * The last reservations' clock samples: the database's clock minus this
   * process's, each with its round trip. The offset used is the one of the
   * shortest round trip (as NTP does): a slow answer (a loaded machine, a
   * queued write) says little about when the database read its clock.
   */
  #samples: { rttMs: number; offsetMs: number }[] = [];
  #offsetMs = 0;

  constructor(db: Db, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  /** Reserves a block of slots; see SlotSource. */
  async reserve(
    channelId: string,
    count: number,
    intervalMs: number,
  ): Promise<number> {
    const before = this.#now();
    const { startMs, dbNowMs } = await reserveSendSlots(this.#db, channelId, {
      count,
      intervalMs,
    });
    const after = this.#now();
    this.#sample(after - before, dbNowMs - (before + after) / 2);
    return startMs - this.#offsetMs;
  }

  #sample(rttMs: number, offsetMs: number): void {
    this.#samples.push({ rttMs, offsetMs });
    if (this.#samples.length > CLOCK_SAMPLES) this.#samples.shift();
    let best = this.#samples[0]!;
    for (const s of this.#samples) if (s.rttMs < best.rttMs) best = s;
    this.#offsetMs = best.offsetMs;
  }

  /** Holds every instance's slots of the channel until `untilMs` (this process's clock). */
  async pauseUntil(channelId: string, untilMs: number): Promise<void> {
    await pauseSendSlots(this.#db, channelId, untilMs + this.#offsetMs);
  }
}

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
export class DbSlots implements SlotSource {
  readonly #db: Db;
  readonly #now: () => number;
  /** The database's clock minus this process's, as last measured. */
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
    this.#offsetMs = dbNowMs - (before + after) / 2;
    return startMs - this.#offsetMs;
  }

  /** Holds every instance's slots of the channel until `untilMs` (this process's clock). */
  async pauseUntil(channelId: string, untilMs: number): Promise<void> {
    await pauseSendSlots(this.#db, channelId, untilMs + this.#offsetMs);
  }
}

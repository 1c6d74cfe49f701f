import type { Executor } from "../../db/schema.ts";
import type { Channel } from "../channels/channel.ts";
import { countQueuedBatch } from "./send_repo.ts";
import { sendRateOf } from "../../upstream/send_governor.ts";

/**
 * Paces batch jobs: each channel's new sends become due one send interval
 * apart, after what that channel already has queued. Claims then interleave
 * channels instead of filling every worker with one channel's batch, which
 * would only wait in that channel's governor (the governor still enforces
 * the exact rate).
 */
export class BatchPacer {
  #next = new Map<string, number>();
  constructor(
    readonly now: Date,
    readonly limits: { defaultRate: number; maxRate: number },
  ) {}

  async dueAt(trx: Executor, channel: Channel): Promise<Date> {
    let position = this.#next.get(channel.id);
    if (position === undefined) {
      position = await countQueuedBatch(trx, channel.id);
    }
    this.#next.set(channel.id, position + 1);
    const rate = sendRateOf(channel, this.limits);
    return new Date(this.now.getTime() + Math.floor((position * 1000) / rate));
  }
}

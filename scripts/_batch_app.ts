// The in-process app the batch benchmarks post to (bench_batch_cpu.ts,
// bench_batch_sql.ts): the real app over a SQLite file with the approved
// template of bench_batch.ts, and the same batches of 100.
import type { Harness } from "../tests/_harness.ts";
import { batchItem } from "./_bench.ts";
import { benchHarness, post } from "./_bench_cpu.ts";

export const BATCH_SIZE = 100;

export interface BatchApp extends AsyncDisposable {
  h: Harness;
  /** Posts the next batch through app.fetch; throws unless all 100 are accepted. */
  send(): Promise<void>;
}

/**
 * The app and its batches: batch b goes to fresh numbers, or with `known`
 * (recipients, a multiple of 100) to the (b mod known/100)th hundred of
 * them, so the first known/100 batches make them.
 */
export async function batchApp(known = 0): Promise<BatchApp> {
  const h = await benchHarness();
  const knownBatches = known / BATCH_SIZE;
  let next = 0;
  return {
    h,
    async send() {
      const b = next++;
      const { status, text } = await post(
        h,
        "/messages/batch",
        JSON.stringify({
          defaultPhoneNumberId: h.tenant.channel.id,
          messages: Array.from(
            { length: BATCH_SIZE },
            (_, k) =>
              batchItem((knownBatches ? b % knownBatches : b) * BATCH_SIZE + k),
          ),
        }),
      );
      if (status !== 202 || !text.includes(`"accepted":${BATCH_SIZE}`)) {
        throw new Error(`Batch failed: ${status} ${text.slice(0, 300)}`);
      }
    },
    [Symbol.asyncDispose]: () => h[Symbol.asyncDispose](),
  };
}

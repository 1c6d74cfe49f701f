// The in-process app the batch benchmarks post to (bench_batch_cpu.ts,
// bench_batch_sql.ts): the real app over a SQLite file with the approved
// template of bench_batch.ts, and the same batches of 100.
import { createHarness, type Harness } from "../tests/_harness.ts";
import { createTemplate } from "../src/domain/templates/template_service.ts";
import { systemClock } from "../src/clock.ts";
import { batchItem } from "./_bench.ts";

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
  const h = await createHarness({ clock: systemClock });
  await createTemplate(h.container, {
    accountId: h.tenant.account.id,
    channelId: h.tenant.channel.id,
    name: "order_update",
    language: "es_AR",
    category: "UTILITY",
    status: "approved",
    components: [{
      type: "BODY",
      text: "Hola {{1}}, tu pedido {{2}} está en camino",
    }],
  });
  const knownBatches = known / BATCH_SIZE;
  let next = 0;
  return {
    h,
    async send() {
      const b = next++;
      const res = await h.app.fetch(
        new Request("http://localhost/api/v2/messages/batch", {
          method: "POST",
          headers: {
            authorization: `Bearer ${h.tenant.key}`,
            "content-type": "application/json",
          },
          body: JSON.stringify({
            defaultPhoneNumberId: h.tenant.channel.id,
            messages: Array.from(
              { length: BATCH_SIZE },
              (_, k) =>
                batchItem(
                  (knownBatches ? b % knownBatches : b) * BATCH_SIZE + k,
                ),
            ),
          }),
        }),
      );
      const text = await res.text();
      if (res.status !== 202 || !text.includes(`"accepted":${BATCH_SIZE}`)) {
        throw new Error(`Batch failed: ${res.status} ${text.slice(0, 300)}`);
      }
    },
    [Symbol.asyncDispose]: () => h[Symbol.asyncDispose](),
  };
}

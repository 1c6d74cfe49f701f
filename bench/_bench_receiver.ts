/**
 * A webhook receiver for benchmarks, on 127.0.0.1 in the benchmark's process:
 * it answers 200 at once (or holds answers back until released), verifies
 * nothing, and hands each delivery with its receipt time to `record`.
 */
import type { Json } from "./_bench.ts";

/** One delivery as received: the envelope's fields and Date.now() at receipt. */
export interface Delivery {
  at: number;
  event: string;
  eventId: string;
  webhookId: string;
  data: Json;
}

export function startReceiver(record: (delivery: Delivery) => void) {
  let release: (() => void) | undefined;
  let held: Promise<void> | undefined;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const body = await req.json();
      record({
        at: Date.now(),
        event: body.event,
        eventId: body.eventId,
        webhookId: body.webhookId,
        data: body.data,
      });
      if (held) await held;
      return new Response("ok");
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    hold() {
      held = new Promise((r) => release = r);
    },
    release() {
      release?.();
      held = undefined;
    },
    stop: () => server.shutdown(),
  };
}

// deno-lint-ignore-file no-console
/**
 * POST /messages/batch throughput and latency: 100 template items per batch (fresh numbers)
 * from C concurrent clients for D seconds.
 *
 *   deno run -A bench/batch.ts [--concurrency 4] [--duration 10] [--size 100]
 */
import {
  api,
  batchItem,
  machine,
  ms,
  numberFlags,
  reportServerLog,
  runLoad,
  startDevServer,
  summary,
} from "./_bench.ts";
import { cpuMs } from "./_bench_serve.ts";

const flags = numberFlags({ concurrency: 4, duration: 10, size: 100 });
const MAX_BATCHES = 20_000;

const server = await startDevServer();
try {
  const batch = (b: number) => ({
    defaultPhoneNumberId: server.channelId,
    messages: Array.from(
      { length: flags.size },
      (_, k) => batchItem(b * flags.size + k),
    ),
  });
  const warm = await api(server, "POST", "/messages/batch", batch(MAX_BATCHES));
  if (warm.status !== 202 || warm.body.data.accepted !== flags.size) {
    throw new Error(`Warm-up batch failed: ${JSON.stringify(warm.body)}`);
  }
  let accepted = 0;
  const cpuStart = cpuMs(server.pid);
  const result = await runLoad({
    concurrency: flags.concurrency,
    durationMs: flags.duration * 1000,
    maxRequests: MAX_BATCHES,
    task: async (b) => {
      const res = await api(server, "POST", "/messages/batch", batch(b));
      if (res.status !== 202) {
        return `${res.status} ${res.body?.error?.code ?? ""}`;
      }
      accepted += res.body.data.accepted;
      if (res.body.data.accepted !== flags.size) {
        return `only ${res.body.data.accepted} of ${flags.size} accepted`;
      }
    },
  });
  const cpu = cpuMs(server.pid) - cpuStart;
  const s = summary(result.latencies);
  const seconds = result.elapsedMs / 1000;
  console.log(
    `bench_batch: POST /messages/batch (${flags.size} template items each)
  machine:      ${machine()}; client and server share it
  concurrency:  ${flags.concurrency}, duration ${seconds.toFixed(1)} s
  batches:      ${result.requests} (${result.errors} errors)
  throughput:   ${(result.requests / seconds).toFixed(2)} batches/s, ${
      (accepted / seconds).toFixed(1)
    } accepted messages/s
  latency:      per batch p50 ${ms(s.p50)}  p99 ${ms(s.p99)}  max ${ms(s.max)}
  server CPU:   ${cpu.toFixed(0)} ms, ${
      (cpu / Math.max(accepted, 1)).toFixed(3)
    } ms per accepted message (the background sends included)
  note:         the workers send the queued batch messages in the background during the
                run (80 msg/s on the one channel), in the same process.`,
  );
  for (const e of result.errorSamples) console.log(`  error sample: ${e}`);
  reportServerLog(server);
} finally {
  await server.stop();
}

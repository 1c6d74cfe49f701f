// deno-lint-ignore-file no-console
/**
 * POST /messages throughput and latency: template `order_update` to distinct fresh numbers
 * from C concurrent clients for D seconds.
 *
 *   deno run -A bench/send.ts [--concurrency 32] [--duration 10]
 */
import {
  api,
  machine,
  ms,
  numberFlags,
  reportServerLog,
  runLoad,
  sim,
  startDevServer,
  summary,
  templateSendTo,
} from "./_bench.ts";

const flags = numberFlags({ concurrency: 32, duration: 10 });
const MAX_REQUESTS = 200_000;

const server = await startDevServer();
try {
  const body = (i: number) => ({
    phoneNumberId: server.channelId,
    ...templateSendTo(i),
  });
  // One warm-up request (JIT, statement cache), not counted.
  const warm = await api(server, "POST", "/messages", body(MAX_REQUESTS));
  if (warm.status !== 201) {
    throw new Error(`Warm-up send failed: ${JSON.stringify(warm.body)}`);
  }
  const before = (await sim(server, "GET", "/stats")).sends as number;
  const result = await runLoad({
    concurrency: flags.concurrency,
    durationMs: flags.duration * 1000,
    maxRequests: MAX_REQUESTS,
    task: async (i) => {
      const res = await api(server, "POST", "/messages", body(i));
      if (res.status !== 201) {
        return `${res.status} ${res.body?.error?.code ?? ""}`;
      }
    },
  });
  const stats = await sim(server, "GET", "/stats");
  const s = summary(result.latencies);
  const seconds = result.elapsedMs / 1000;
  console.log(`bench_send: POST /messages (template order_update, fresh numbers)
  machine:      ${machine()}; client and server share it
  concurrency:  ${flags.concurrency}, duration ${seconds.toFixed(1)} s
  requests:     ${result.requests} (${result.errors} errors)
  throughput:   ${(result.requests / seconds).toFixed(1)} requests/s
  latency:      p50 ${ms(s.p50)}  p90 ${ms(s.p90)}  p99 ${ms(s.p99)}  max ${
    ms(s.max)
  }
  upstream:     ${
    stats.sends - before
  } sends reached the simulator during the run (one channel, 80 msg/s governor),
                ${
    Object.values(stats.throttledByNumber as Record<string, number>)
      .reduce((a, b) => a + b, 0)
  } throttled (130429) by the simulator
  note:         the server's workers keep sending queued messages in the background
                during the run (same process): the figures include that work, and the
                status callbacks (sent/delivered/read) the simulator posts back.`);
  for (const e of result.errorSamples) console.log(`  error sample: ${e}`);
  reportServerLog(server);
} finally {
  await server.stop();
}

// deno-lint-ignore-file no-console
/**
 * CPU per accepted batch message, in one process:
 * `deno run -A scripts/bench_batch_cpu.ts [--batches 200] [--rounds 3]`.
 *
 * The real app (tests/_harness.ts: a SQLite file, a seeded tenant) answers
 * POST /messages/batch of 100 template items to fresh numbers, the body of
 * scripts/bench_batch.ts, through app.fetch: no sockets, no workers, no
 * background sends, one request at a time. Printed per round: the process
 * CPU (user + system, from /proc, the checkpointer thread included) per
 * accepted message, and the wall time (which includes the group commit's
 * wait for an I/O turn, a setTimeout, before each batch). CPU, not wall
 * time, is the figure that holds on a shared machine; alternate two
 * checkouts and compare the lowest round of each run.
 */
import { benchHarness, cpuMs, post } from "./_bench_cpu.ts";
import { batchItem, numberFlags } from "./_bench.ts";

const flags = numberFlags({ batches: 200, rounds: 3 });
const SIZE = 100;

await using h = await benchHarness();

const body = (b: number) =>
  JSON.stringify({
    defaultPhoneNumberId: h.tenant.channel.id,
    messages: Array.from({ length: SIZE }, (_, k) => batchItem(b * SIZE + k)),
  });

let next = 0;
async function send(): Promise<void> {
  const { status, text } = await post(h, "/messages/batch", body(next++));
  if (status !== 202 || !text.includes(`"accepted":${SIZE}`)) {
    throw new Error(`Batch failed: ${status} ${text.slice(0, 300)}`);
  }
}

for (let i = 0; i < 20; i++) await send(); // warm-up: JIT, caches, statements
for (let r = 0; r < flags.rounds; r++) {
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  for (let i = 0; i < flags.batches; i++) await send();
  const cpu = cpuMs() - cpu0;
  console.log(
    `round ${r + 1}: ${flags.batches} batches of ${SIZE}, CPU ${cpu} ms, ${
      (cpu * 1000 / (flags.batches * SIZE)).toFixed(1)
    } us per message, wall ${(performance.now() - wall0).toFixed(0)} ms`,
  );
}

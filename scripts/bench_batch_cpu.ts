// deno-lint-ignore-file no-console
/**
 * CPU per accepted batch message, in one process:
 * `deno run -A scripts/bench_batch_cpu.ts [--batches 200] [--rounds 3] [--known 0]`.
 *
 * The real app (tests/_harness.ts: a SQLite file, a seeded tenant) answers
 * POST /messages/batch of 100 template items to fresh numbers, the body of
 * scripts/bench_batch.ts, through app.fetch: no sockets, no workers, no
 * background sends, one request at a time. With `--known N` (a multiple of
 * 100) the rounds go to N recipients made first (N/100 batches of fresh
 * numbers), each batch to the next 100 of them in turn: what a campaign to
 * existing customers reads and updates. Printed per round: the process
 * CPU (user + system, from /proc, the checkpointer thread included) per
 * accepted message, and the wall time (which includes the group commit's
 * wait for an I/O turn, a setTimeout, before each batch). CPU, not wall
 * time, is the figure that holds on a shared machine; alternate two
 * checkouts and compare the lowest round of each run.
 */
import { BATCH_SIZE as SIZE, batchApp } from "./_batch_app.ts";
import { cpuMs } from "./_bench_cpu.ts";
import { numberFlags } from "./_bench.ts";

const flags = numberFlags({ batches: 200, rounds: 3, known: 0 });

await using app = await batchApp(flags.known);

// Warm-up (JIT, caches, statements); with --known, the known recipients.
for (let i = 0; i < Math.max(20, flags.known / SIZE); i++) await app.send();
for (let r = 0; r < flags.rounds; r++) {
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  for (let i = 0; i < flags.batches; i++) await app.send();
  const cpu = cpuMs() - cpu0;
  console.log(
    `round ${r + 1}: ${flags.batches} batches of ${SIZE}, CPU ${cpu} ms, ${
      (cpu * 1000 / (flags.batches * SIZE)).toFixed(1)
    } us per message, wall ${(performance.now() - wall0).toFixed(0)} ms`,
  );
}

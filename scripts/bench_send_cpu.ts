// deno-lint-ignore-file no-console
/**
 * CPU per POST /messages, in one process:
 * `deno run -A scripts/bench_send_cpu.ts [--requests 20000] [--rounds 3] [--concurrency 32]
 *   [--statements 0]`.
 *
 * The body of ../shared/bench/send.lua.tmpl (template `order_update` with
 * two text parameters) to a pool of 10,000 numbers +1555xxxxxxx, each sent
 * once first so that, as after that benchmark's warm-up, contacts and
 * conversations exist. The real app (tests/_harness.ts: a SQLite file, a
 * seeded tenant) answers through app.fetch with `--concurrency` requests
 * in flight (so the group commit gathers them as under wrk): no sockets,
 * no workers, no simulator. Printed per round: the process CPU (user +
 * system from /proc, the checkpointer thread included) per request and
 * the wall time. CPU, not wall time, is the figure that holds on a shared
 * machine: alternate two checkouts and compare the lowest round of each
 * (add --v8-flags=--trace-gc to see the collections). With --statements 1,
 * the statements by text (count and time inside each, per send) of each
 * round.
 */
import { benchHarness, cpuMs, post } from "./_bench_cpu.ts";
import { numberFlags } from "./_bench.ts";
import { printStatements, StatementTimer } from "./_bench_statements.ts";

const flags = numberFlags({
  requests: 20_000,
  rounds: 3,
  concurrency: 32,
  statements: 0,
});
const statements = new StatementTimer(flags.statements !== 0);
const POOL = 10_000;

await using h = await benchHarness({ LOG_LEVEL: "error" });

/** send.lua.tmpl's body, byte for byte. */
function body(n: number): string {
  return `{"phoneNumberId":"${h.tenant.channel.id}","to":"+1555${
    String(n).padStart(7, "0")
  }","type":"template","template":{"name":"order_update","language":{"code":"es_AR"},"components":[{"type":"body","parameters":[{"type":"text","text":"Ana"},{"type":"text","text":"#${n}"}]}]}}`;
}

async function send(n: number): Promise<void> {
  const { status, text } = await post(h, "/messages", body(n));
  if (status !== 201) {
    throw new Error(`Send failed: ${status} ${text.slice(0, 300)}`);
  }
}

/** `count` sends from `concurrency` clients, recipients drawn by `pick`. */
async function load(count: number, pick: (i: number) => number) {
  let next = 0;
  const client = async () => {
    while (next < count) await send(pick(next++));
  };
  await Promise.all(Array.from({ length: flags.concurrency }, client));
}

await load(POOL, (i) => i); // every recipient once: contacts, conversations
for (let r = 0; r < flags.rounds; r++) {
  statements.take();
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  await load(flags.requests, () => Math.floor(Math.random() * POOL));
  const cpu = cpuMs() - cpu0;
  console.log(
    `round ${
      r + 1
    }: ${flags.requests} sends at c${flags.concurrency}, CPU ${cpu} ms, ${
      (cpu * 1000 / flags.requests).toFixed(1)
    } us per send, wall ${(performance.now() - wall0).toFixed(0)} ms`,
  );
  if (flags.statements) {
    printStatements(
      `round ${r + 1}`,
      statements.take(),
      flags.requests,
      "send",
    );
  }
}

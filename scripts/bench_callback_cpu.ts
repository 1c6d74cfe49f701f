// deno-lint-ignore-file no-console
/**
 * CPU per Meta status callback (POST /meta/webhook), in one process:
 * `deno run -A scripts/bench_callback_cpu.ts [--messages 3000] [--rounds 2]
 *   [--concurrency 4] [--statements 0]`.
 *
 * The real app (tests/_harness.ts: a SQLite file, a seeded tenant) with
 * `--messages` template sends accepted through POST /messages and marked
 * sent with a wamid (as their send jobs would), then, each round, a signed
 * `delivered` and then a signed `read` callback for every one of them (one
 * status per payload, as Meta sends them), `--concurrency` at a time through
 * app.fetch: no sockets, no simulator. The messages go back to `sent`
 * before each round. Printed per status: the process CPU (user + system
 * from /proc) per callback and the wall time; per round, each thread's CPU
 * (the checkpointer's thread is `worker-1`). CPU, not wall time, is the
 * figure that holds on a shared machine: alternate two checkouts and
 * compare the lowest round of each. The webhook gate admits a few unverified
 * posts per address at once, so keep --concurrency small. The wall time is
 * not a throughput: with the writer otherwise idle, each group of callbacks
 * waits out the status gathering window (STATUS_GATHER, 10 ms) first. With
 * --statements 1, the statements by text (count and time inside each, per
 * callback) of each status.
 *
 * The CPU per callback depends on how often the process sleeps: on the
 * 2-core VMs of 2026-11-28, one callback at a time (--concurrency 1) cost
 * 2.4-2.9 ms, its unit's statements and code (writeCallbacks) 0.83-0.86 ms,
 * where the same callbacks back to back (no gathering window, so no sleep
 * between them) cost 0.9-1.2 ms and 0.37-0.42 ms: code woken after 10 ms
 * idle ran about 2.2 times slower (cold caches). Compare runs at the same
 * --concurrency only.
 */
import { sql } from "kysely";
import { acceptedSends, benchHarness, cpuMs } from "./_bench_cpu.ts";
import { printStatements, StatementTimer } from "./_bench_statements.ts";
import { freshNumber, numberFlags } from "./_bench.ts";
import { webhookEnvelope } from "../src/simulator/callbacks.ts";
import { signMetaBody } from "../src/upstream/meta_signature.ts";
import { createSimulatorState, digitsOf } from "../src/simulator/state.ts";

const flags = numberFlags({
  messages: 3000,
  rounds: 2,
  concurrency: 4,
  statements: 0,
});
const statements = new StatementTimer(flags.statements !== 0);
const APP_SECRET = "bench-app-secret";
const ENCODER = new TextEncoder();

await using h = await benchHarness({
  LOG_LEVEL: "error",
  META_APP_SECRET: APP_SECRET,
});
const db = h.container.db;

const ids = await acceptedSends(h, flags.messages);
const { rows: [channel] } = await sql<{ id: string }>`
  select upstream_phone_number_id as id from channels
  where id = ${h.tenant.channel.id}`.execute(db);

/** The simulator's envelope (the number it does not know: Meta's defaults). */
const simulator = createSimulatorState({ appSecret: APP_SECRET });

/** One status-only payload, as Meta sends it. */
function payload(i: number, status: string): string {
  return JSON.stringify(webhookEnvelope(simulator, channel!.id, {
    statuses: [{
      id: `wamid.${ids[i]}`,
      status,
      timestamp: String(1_750_857_384 + i),
      recipient_id: digitsOf(freshNumber(i)),
      biz_opaque_callback_data: ids[i],
    }],
  }));
}

/** A payload with its X-Hub-Signature-256 value. */
function signed(body: string): [string, string] {
  return [body, signMetaBody(APP_SECRET, body)];
}

async function callback([body, signature]: [string, string]): Promise<void> {
  const res = await h.app.fetch(
    new Request("http://localhost/meta/webhook", {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": String(ENCODER.encode(body).length),
        "x-hub-signature-256": signature,
      },
      body,
    }),
  );
  const text = await res.text();
  if (res.status !== 200) throw new Error(`Callback: ${res.status} ${text}`);
}

/** CPU ms of each of this process's threads, by name. */
function threadCpu(): Map<string, number> {
  const out = new Map<string, number>();
  for (const task of Deno.readDirSync("/proc/self/task")) {
    try {
      const fields = Deno.readTextFileSync(`/proc/self/task/${task.name}/stat`)
        .split(") ")[1]!.split(" ");
      const name = Deno.readTextFileSync(`/proc/self/task/${task.name}/comm`)
        .trim();
      const ms = (Number(fields[11]) + Number(fields[12])) * 10;
      out.set(name, (out.get(name) ?? 0) + ms);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

for (let r = 0; r < flags.rounds; r++) {
  await sql`update messages set status = 'sent',
    wa_message_id = 'wamid.' || id`.execute(db);
  const threads0 = threadCpu();
  for (const status of ["delivered", "read"]) {
    // Bodies and signatures are the client's work: made before the clock starts.
    const bodies = ids.map((_, i) => signed(payload(i, status)));
    let next = 0;
    statements.take();
    const cpu0 = cpuMs();
    const wall0 = performance.now();
    await Promise.all(
      Array.from({ length: flags.concurrency }, async () => {
        while (next < bodies.length) await callback(bodies[next++]!);
      }),
    );
    const cpu = cpuMs() - cpu0;
    console.log(
      `round ${
        r + 1
      } ${status}: ${bodies.length} callbacks at c${flags.concurrency}, ${
        (cpu * 1000 / bodies.length).toFixed(1)
      } us CPU per callback, wall ${
        ((performance.now() - wall0) * 1000 / bodies.length).toFixed(0)
      } us per callback`,
    );
    if (flags.statements) {
      printStatements(status, statements.take(), bodies.length, "callback");
    }
  }
  const threads = [...threadCpu()].map(([name, ms]) =>
    [
      name,
      ms - (threads0.get(name) ?? 0),
    ] as const
  ).filter(([, ms]) => ms > 0);
  console.log(
    `  threads: ${threads.map(([name, ms]) => `${name} ${ms} ms`).join(", ")}`,
  );
}
const { rows } = await sql<{ n: number }>`
  select count(*) as n from messages where status = 'read'`.execute(db);
if (Number(rows[0]!.n) !== ids.length) {
  throw new Error(`${rows[0]!.n} of ${ids.length} messages read`);
}

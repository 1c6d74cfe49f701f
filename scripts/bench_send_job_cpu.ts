// deno-lint-ignore-file no-console
/**
 * CPU per send job (deliverMessage: read, pace, send, record), in one
 * process: `deno run -A scripts/bench_send_job_cpu.ts [--messages 3000]
 * [--rounds 3] [--concurrency 8]`.
 *
 * The real app (tests/_harness.ts: a SQLite file, a seeded tenant) with
 * `--messages` template sends accepted through POST /messages to distinct
 * numbers, the channel's rate raised so the governor never waits, and an
 * upstream that answers each send at once (Meta's side is the simulator's
 * cost, not ours). Each round puts the messages back to `queued` and runs
 * their deliveries `--concurrency` at a time, as a send pool does, each
 * recorded `sent` with its events through the group commit. Printed per
 * round: the process CPU (user + system from /proc, the checkpointer
 * thread included) per send job and the wall time. CPU, not wall time, is
 * the figure that holds on a shared machine: alternate two checkouts and
 * compare the lowest round of each.
 */
import { sql } from "kysely";
import { acceptedSends, benchHarness, cpuMs } from "./_bench_cpu.ts";
import { numberFlags } from "./_bench.ts";
import { deliverMessage } from "../src/domain/messages/delivery_service.ts";
import { updateChannel } from "../src/domain/channels/channel_service.ts";
import { acceptingUpstream } from "../tests/_support/accepting_upstream.ts";

const flags = numberFlags({ messages: 3000, rounds: 3, concurrency: 8 });

await using h = await benchHarness({ LOG_LEVEL: "error" });
const db = h.container.db;

const ids = await acceptedSends(h, flags.messages);
await updateChannel(h.container, h.tenant.channel.id, { sendRate: 1e9 });

const { graph } = acceptingUpstream((n) => `wamid.B${n}`);
const deps = { ...h.container, graph };

for (let r = 0; r < flags.rounds; r++) {
  await sql`update messages set status = 'queued', wa_message_id = null`
    .execute(db);
  let next = 0;
  const cpu0 = cpuMs();
  const wall0 = performance.now();
  await Promise.all(
    Array.from({ length: flags.concurrency }, async () => {
      while (next < ids.length) await deliverMessage(deps, ids[next++]!);
    }),
  );
  const cpu = cpuMs() - cpu0;
  const { rows } = await sql<{ n: number }>`
    select count(*) as n from messages where status = 'sent'`.execute(db);
  if (Number(rows[0]!.n) !== ids.length) {
    throw new Error(`${rows[0]!.n} of ${ids.length} messages sent`);
  }
  console.log(
    `round ${r + 1}: ${ids.length} send jobs at c${flags.concurrency}, ${
      (cpu * 1000 / ids.length).toFixed(1)
    } us CPU per send job, wall ${
      ((performance.now() - wall0) * 1000 / ids.length).toFixed(0)
    } us per send job`,
  );
}

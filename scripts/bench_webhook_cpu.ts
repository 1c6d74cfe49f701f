// deno-lint-ignore-file no-console
/**
 * CPU and statements per delivered webhook, in one process:
 * `deno run -A scripts/bench_webhook_cpu.ts [--messages 200] [--rounds 3]
 *   [--rate 0] [--statements 0]`.
 *
 * The real app (tests/_harness.ts: a SQLite file, a seeded tenant) with two
 * subscriptions to every event, on a receiver in a child process (its CPU
 * is not counted) that answers 200 at once. Each round records the events
 * of `messages` new-recipient messages as the pipeline makes them
 * (contact.created and conversation.created in one unit, then three
 * message.status_changed, one unit each, all through the group commit),
 * then starts the app's worker pools (lifecycle.ts) and waits until every
 * delivery job has ended; with --rate, the pools run while the messages
 * arrive at that pace (the pipeline's shape: small units). Printed per
 * round, for the fan-out and the deliveries apart (together with --rate):
 * process CPU (user + system, from /proc, the checkpointer thread
 * included) and SQLite statements executed, each per delivered webhook, and
 * with --statements 1 the statements by text (count and wall time inside
 * each, per delivered webhook). CPU, not wall time, is the figure that
 * holds on a shared machine: alternate two checkouts and compare the lowest
 * round of each run.
 */
import { sql } from "kysely";
import { createHarness } from "../tests/_harness.ts";
import { systemClock } from "../src/clock.ts";
import { recordEvents } from "../src/domain/events/event_service.ts";
import { startBackground } from "../src/lifecycle.ts";
import { numberFlags } from "./_bench.ts";
import { cpuMs } from "./_bench_cpu.ts";
import { printStatements, StatementTimer } from "./_bench_statements.ts";

const flags = numberFlags({
  messages: 200,
  rounds: 3,
  statements: 0,
  /** Messages a second with the pools running (0: fan out, then deliver). */
  rate: 0,
});

const RECEIVER = `
const s = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: (a) =>
  console.log(a.port) }, async (req) => { await req.arrayBuffer();
  return new Response("ok"); });`;
const child = new Deno.Command(Deno.execPath(), {
  args: ["eval", RECEIVER],
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
const port = Number((await reader.read()).value!.trim());

await using h = await createHarness({ clock: systemClock });
for (let i = 0; i < 2; i++) {
  const res = await h.request("POST", "/api/v2/webhooks", {
    body: {
      url: `http://127.0.0.1:${port}/hook/${i}`,
      events: [
        "contact.created",
        "conversation.created",
        "message.status_changed",
      ],
    },
  });
  if (res.status !== 201) throw new Error(JSON.stringify(res.body));
}

/**
 * Times the main thread went to sleep (voluntary context switches): each is
 * an event-loop wake-up later, which costs CPU of its own (on this VM
 * about as much as a small statement).
 */
function sleeps(): number {
  const status = Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/status`);
  return Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(status)![1]);
}

const statements = new StatementTimer(flags.statements !== 0);

const accountId = h.tenant.account.id;
let serial = 0;
/** The five events of one new-recipient message, in the pipeline's units. */
function messageUnits(): Promise<unknown>[] {
  const n = ++serial;
  const contactId = `contact-${n}`;
  const base = {
    id: `message-${n}`,
    conversationId: `conversation-${n}`,
    contactId,
    phoneNumberId: h.tenant.channel.id,
    direction: "outbound",
    type: "template",
    content: { template: { name: "order_update", language: "es_AR" } },
    waMessageId: `wamid.${"x".repeat(40)}${n}`,
    createdAt: new Date().toISOString(),
  };
  const at = () => new Date();
  const unit = (events: Parameters<typeof recordEvents>[2]) =>
    h.container.commits.run((trx) => recordEvents(trx, accountId, events));
  return [
    unit([
      {
        type: "contact.created",
        data: { id: contactId, phoneNumber: `+54911${n}`, name: null },
        createdAt: at(),
      },
      {
        type: "conversation.created",
        data: { id: base.conversationId, contactId },
        createdAt: at(),
      },
    ]),
    ...["sent", "delivered", "read"].map((status) =>
      unit([{
        type: "message.status_changed",
        data: { ...base, status, previousStatus: "queued" },
        createdAt: at(),
      }])
    ),
  ];
}

/** Deliveries not attempted yet (their partial index holds only those). */
async function pendingDeliveries(): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*) as n
    from webhook_deliveries where status = 'pending'`.execute(h.container.db);
  return Number(rows[0]!.n);
}

function report(
  what: string,
  cpu: number,
  statements: number,
  slept: number,
  n: number,
) {
  console.log(
    `  ${what}: CPU ${cpu} ms, ${(cpu * 1000 / n).toFixed(1)} us, ${
      (statements / n).toFixed(2)
    } statements and ${(slept / n).toFixed(2)} sleeps per delivered webhook`,
  );
}

/** Waits until no delivery is pending. */
async function drained(): Promise<void> {
  while (await pendingDeliveries() > 0) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A round with the pools running while messages arrive at `rate` a second
 * (the pipeline's shape: deliveries in small units as they come).
 */
async function pacedRound(r: number, deliveries: number): Promise<void> {
  const parts = startBackground(h.container);
  const cpu0 = cpuMs();
  const st0 = statements.count;
  const slept0 = sleeps();
  const wall0 = performance.now();
  const units: Promise<unknown>[] = [];
  for (let i = 0; i < flags.messages; i++) {
    units.push(...messageUnits());
    const due = wall0 + (i + 1) * 1000 / flags.rate;
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, due - performance.now()))
    );
  }
  await Promise.all(units);
  await drained();
  const cpu = cpuMs() - cpu0;
  const st = statements.count - st0;
  const slept = sleeps() - slept0;
  for (const p of parts) await p.stop();
  console.log(
    `round ${
      r + 1
    }: ${flags.messages} messages at ${flags.rate}/s, ${deliveries} webhooks, in ${
      (performance.now() - wall0).toFixed(0)
    } ms`,
  );
  report("fan-out and delivery", cpu, st, slept, deliveries);
  if (flags.statements) {
    printStatements("all", statements.take(), deliveries, "delivered webhook");
  }
}

for (let r = 0; r < flags.rounds; r++) {
  const deliveries = flags.messages * 5 * 2;
  statements.take();
  if (flags.rate > 0) {
    await pacedRound(r, deliveries);
    continue;
  }
  let cpu0 = cpuMs();
  let st0 = statements.count;
  let slept0 = sleeps();
  // 50 messages' units at a time, gathered by the group commit.
  for (let i = 0; i < flags.messages; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, flags.messages - i) }, messageUnits)
        .flat(),
    );
  }
  const fanCpu = cpuMs() - cpu0;
  const fanSt = statements.count - st0;
  const fanSlept = sleeps() - slept0;
  const fanSeen = statements.take();
  cpu0 = cpuMs();
  st0 = statements.count;
  slept0 = sleeps();
  const wall0 = performance.now();
  const parts = startBackground(h.container);
  await drained();
  for (const p of parts) await p.stop();
  const cpu = cpuMs() - cpu0;
  const st = statements.count - st0;
  const slept = sleeps() - slept0;
  console.log(
    `round ${
      r + 1
    }: ${flags.messages} messages, ${deliveries} webhooks, delivered in ${
      (performance.now() - wall0).toFixed(0)
    } ms`,
  );
  report("fan-out", fanCpu, fanSt, fanSlept, deliveries);
  report("delivery", cpu, st, slept, deliveries);
  if (flags.statements) {
    printStatements("fan-out", fanSeen, deliveries, "delivered webhook");
    printStatements(
      "delivery",
      statements.take(),
      deliveries,
      "delivered webhook",
    );
  }
}
const failed = await h.container.db.selectFrom("webhook_deliveries")
  .select((eb) => eb.fn.countAll<number>().as("n"))
  .where("status", "!=", "success").executeTakeFirstOrThrow();
if (Number(failed.n) !== 0) {
  throw new Error(`${failed.n} deliveries not a success`);
}
child.kill();
await child.status;

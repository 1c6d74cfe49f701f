// deno-lint-ignore-file no-console
/**
 * CPU and statements per delivered webhook, in one process:
 * `deno run -A scripts/bench_webhook_cpu.ts [--messages 200] [--rounds 3]`.
 *
 * The real app (tests/_harness.ts: a SQLite file, a seeded tenant) with two
 * subscriptions to every event, on a receiver in a child process (its CPU
 * is not counted) that answers 200 at once. Each round records the events
 * of `messages` new-recipient messages as the pipeline makes them
 * (contact.created and conversation.created in one unit, then three
 * message.status_changed, one unit each, all through the group commit),
 * then starts the app's worker pools (lifecycle.ts) and waits until every
 * delivery job has ended. Printed per round, for the fan-out and for the
 * deliveries apart: process CPU (user + system, from /proc, the
 * checkpointer thread included) and SQLite statements executed, each per
 * delivered webhook, and with --statements the statements by text. CPU,
 * not wall time, is the figure that holds on a shared machine: alternate
 * two checkouts and compare the lowest round of each run.
 */
import { StatementSync } from "node:sqlite";
import { createHarness } from "../tests/_harness.ts";
import { systemClock } from "../src/clock.ts";
import { recordEvents } from "../src/domain/events/event_service.ts";
import { startBackground } from "../src/lifecycle.ts";
import { numberFlags } from "./_bench.ts";

const flags = numberFlags({ messages: 200, rounds: 3, statements: 0 });

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

/** This process's user + system CPU in ms (all threads). */
function cpuMs(): number {
  const fields = Deno.readTextFileSync("/proc/self/stat").split(") ")[1]!
    .split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const seen = new Map<string, number>();
let counting = 0;
// deno-lint-ignore no-explicit-any
const proto = StatementSync.prototype as any;
for (const m of ["all", "run", "get", "iterate"]) {
  const original = proto[m];
  proto[m] = function (this: StatementSync, ...args: unknown[]) {
    counting++;
    if (flags.statements) {
      const key = this.sourceSQL.replace(/\s+/g, " ").slice(0, 70);
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    return original.apply(this, args);
  };
}

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

async function pendingJobs(): Promise<number> {
  const row = await h.container.db.selectFrom("jobs")
    .select((eb) => eb.fn.countAll<number>().as("n"))
    .where("kind", "=", "webhook.deliver")
    .where("state", "in", ["available", "retryable", "running"])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function report(what: string, cpu: number, statements: number, n: number) {
  console.log(
    `  ${what}: CPU ${cpu} ms, ${(cpu * 1000 / n).toFixed(1)} us and ${
      (statements / n).toFixed(2)
    } statements per delivered webhook`,
  );
}

for (let r = 0; r < flags.rounds; r++) {
  const deliveries = flags.messages * 5 * 2;
  seen.clear();
  let cpu0 = cpuMs();
  let st0 = counting;
  // 50 messages' units at a time, gathered by the group commit.
  for (let i = 0; i < flags.messages; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, flags.messages - i) }, messageUnits)
        .flat(),
    );
  }
  const fanCpu = cpuMs() - cpu0;
  const fanSt = counting - st0;
  const fanSeen = new Map(seen);
  seen.clear();
  cpu0 = cpuMs();
  st0 = counting;
  const wall0 = performance.now();
  const parts = startBackground(h.container);
  while (await pendingJobs() > 0) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const p of parts) await p.stop();
  const cpu = cpuMs() - cpu0;
  const st = counting - st0;
  console.log(
    `round ${
      r + 1
    }: ${flags.messages} messages, ${deliveries} webhooks, delivered in ${
      (performance.now() - wall0).toFixed(0)
    } ms`,
  );
  report("fan-out", fanCpu, fanSt, deliveries);
  report("delivery", cpu, st, deliveries);
  if (flags.statements) {
    for (const [label, map] of [["fan-out", fanSeen], ["delivery", seen]]) {
      console.log(`  ${label} statements:`);
      const rows = [...(map as Map<string, number>)].sort((a, b) =>
        b[1] - a[1]
      );
      for (const [text, n] of rows) {
        console.log(`    ${(n / deliveries).toFixed(3)}  ${text}`);
      }
    }
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

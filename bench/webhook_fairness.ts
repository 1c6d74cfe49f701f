// deno-lint-ignore-file no-console
/**
 * Webhook fairness across accounts (issue 27, finding 4), before and after in
 * one run: each side a fresh dev server (a real process) with two accounts,
 *
 *   - the attacker (dev's account): 12 subscriptions on a receiver that answers
 *     200 after 9.5 s (a success: never retried nor disabled), then 30
 *     POST /contacts at once (360 slow deliveries);
 *   - the victim (a second account): one subscription on a receiver that
 *     answers at once, and POST /contacts at --rate per second for
 *     --duration seconds while the attack runs.
 *
 * Reports the victim's delivery lag (event time, data.createdAt, to receipt):
 * p50, p99 and max, and the attacker's attempts in flight at its receiver.
 * "before" runs the server of `--before` (default 4e666ae, the code of the
 * finding), extracted with `git archive` into a temp dir; "after" runs this
 * tree. About two minutes in all.
 *
 *   deno run -A bench/webhook_fairness.ts [--before 4e666ae]
 *     [--rate 5] [--duration 20] [--subscriptions 12] [--contacts 30]
 *     [--slow-ms 9500] [--only before|after]
 */
import { parseArgs } from "node:util";
import {
  api,
  benchKey,
  cli,
  type DevServer,
  freshNumber,
  machine,
  ms,
  reportServerLog,
  sleep,
  startDevServer,
  summary,
} from "./_bench.ts";
import { startReceiver } from "./_bench_receiver.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    before: { type: "string", default: "4e666ae" },
    only: { type: "string" },
    rate: { type: "string", default: "5" },
    duration: { type: "string", default: "20" },
    subscriptions: { type: "string", default: "12" },
    contacts: { type: "string", default: "30" },
    "slow-ms": { type: "string", default: "9500" },
  },
});
const flags = {
  rate: Number(values.rate),
  duration: Number(values.duration),
  subscriptions: Number(values.subscriptions),
  contacts: Number(values.contacts),
  slowMs: Number(values["slow-ms"]),
};
const ROOT = new URL("../", import.meta.url).pathname;

/** The tree of `ref` in a temp dir (`git archive`), to run as "before". */
async function checkout(ref: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "bmbench-before-" });
  const out = await new Deno.Command("sh", {
    args: ["-c", `git archive "$1" | tar -x -C "$2"`, "sh", ref, dir],
    cwd: ROOT,
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(
      `Cannot extract ${ref}: ${new TextDecoder().decode(out.stderr)}`,
    );
  }
  // Its node_modules made now, so the server's stderr holds only its log.
  await new Deno.Command(Deno.execPath(), {
    args: ["cache", "--quiet", "main.ts"],
    cwd: dir,
    stdout: "null",
    stderr: "null",
  }).output();
  return dir;
}

/** A receiver that answers 200 after `delayMs`, counting the requests it holds. */
function startSlowReceiver(delayMs: number) {
  let holding = 0;
  let peak = 0;
  let answered = 0;
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      await req.arrayBuffer();
      peak = Math.max(peak, ++holding);
      await sleep(delayMs);
      holding--;
      answered++;
      return new Response("ok");
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    stats: () => ({ holding, peak, answered }),
    stop: () => server.shutdown(),
  };
}

/** A second account with its own key, made through the server's CLI. */
async function victimAccount(server: DevServer): Promise<DevServer> {
  await cli(server, [
    "accounts",
    "create",
    "--name",
    "Victim",
    "--slug",
    "victim",
    "--country",
    "AR",
  ]);
  return { ...server, apiKey: await benchKey(server, "victim") };
}

async function ok(
  res: Promise<{ status: number; body: unknown }>,
  status: number,
) {
  const r = await res;
  if (r.status !== status) {
    throw new Error(
      `Expected ${status}, got ${r.status}: ${JSON.stringify(r.body)}`,
    );
  }
  return r;
}

let seq = 0;
const contact = (server: DevServer) =>
  ok(
    api(server, "POST", "/contacts", { phoneNumber: freshNumber(++seq) }),
    201,
  );

async function until(check: () => boolean, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await sleep(20);
  }
}

async function side(name: string, root: string) {
  const server = await startDevServer({
    root,
    env: { SHUTDOWN_DRAIN_MS: "1000" },
  });
  const slow = startSlowReceiver(flags.slowMs);
  const lags: number[] = [];
  const fast = startReceiver((d) =>
    lags.push(d.at - Date.parse(d.data.createdAt))
  );
  try {
    const victim = await victimAccount(server);
    for (let i = 0; i < flags.subscriptions; i++) {
      await ok(
        api(server, "POST", "/webhooks", {
          url: `${slow.url}?s=${i}`,
          events: ["contact.created"],
        }),
        201,
      );
    }
    await ok(
      api(victim, "POST", "/webhooks", {
        url: fast.url,
        events: ["contact.created"],
      }),
      201,
    );
    // Warm-up (not counted): the victim's path, once.
    for (let i = 0; i < 3; i++) await contact(victim);
    await until(() => lags.length >= 3, 30_000, "the warm-up deliveries");
    lags.length = 0;
    // The attack: every slow delivery queued at once.
    await Promise.all(
      Array.from({ length: flags.contacts }, () => contact(server)),
    );
    const total = Math.round(flags.rate * flags.duration);
    const started = performance.now();
    for (let i = 0; i < total; i++) {
      const wait = started + (i * 1_000) / flags.rate - performance.now();
      if (wait > 0) await sleep(wait);
      await contact(victim);
    }
    const under = slow.stats();
    await until(
      () => lags.length >= total,
      120_000,
      `${total} victim deliveries`,
    );
    const s = summary(lags);
    console.log(
      `${name.padEnd(6)} victim p50 ${ms(s.p50)}  p99 ${ms(s.p99)}  max ${
        ms(s.max)
      } (${lags.length} deliveries); attacker: ${under.peak} attempts in flight at most, ${under.answered} of ${
        flags.contacts * flags.subscriptions
      } answered by the end of the victim's events`,
    );
    reportServerLog(server);
    return s;
  } finally {
    await server.stop();
    await slow.stop();
    await fast.stop();
  }
}

console.log(
  `bench_webhook_fairness: ${machine()}; server, receivers and load share it`,
);
console.log(
  `attack: ${flags.subscriptions} subscriptions answering 200 after ${flags.slowMs} ms, ${flags.contacts} POST /contacts at once; victim: ${flags.rate} events/s for ${flags.duration} s, one subscription answering at once`,
);
const results: Record<string, ReturnType<typeof summary>> = {};
if (values.only !== "after") {
  const before = await checkout(values.before!);
  try {
    results.before = await side("before", before);
  } finally {
    await Deno.remove(before, { recursive: true }).catch(() => {});
  }
}
if (values.only !== "before") results.after = await side("after", ROOT);
if (results.before && results.after) {
  console.log(
    `=> victim p99 ${ms(results.before.p99)} (${values.before}) -> ${
      ms(results.after.p99)
    } (this tree); target p99 < 1 s`,
  );
}

// deno-lint-ignore-file no-console
/**
 * What forged posts to /meta/webhook cost a fresh dev server (a real process):
 *
 *   1. GET /account latency with nothing else going on (baseline);
 *   2. server CPU per forged 3 MB post that is read, hashed and refused 401
     (sequential, 20 posts: without TRUSTED_PROXIES no address is refused);
 *   3. --flood loops posting forged 3 MB bodies for --duration s, with
 *      GET /account timed meanwhile; server CPU per forged post and statuses.
 *
 * Server CPU is the run time of all its threads (/proc/<pid>/task/<tid>/schedstat),
 * less the idle rate measured first (and, in 3, the CPU of the GET /account
 * requests, per request as measured in 1). The flood runs in a child process so its
 * uploads do not slow this process's timing of GET /account. Linux only.
 *
 *   deno run -A bench/meta_webhook.ts [--flood 6] [--duration 5]
 */
import {
  api,
  machine,
  ms,
  numberFlags,
  sleep,
  startDevServer,
  summary,
} from "./_bench.ts";
import { MAX_WEBHOOK_BYTES } from "../src/http/webhook_gate.ts";

const FLOOD_MODE = "--flood-child";
const FORGED = new Uint8Array(MAX_WEBHOOK_BYTES).fill(0x20);
FORGED[0] = 0x7b;

/** CPU time of every thread of the process so far, ms. */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    try {
      const stat = Deno.readTextFileSync(
        `/proc/${pid}/task/${task.name}/schedstat`,
      );
      ns += Number(stat.split(" ")[0]);
    } catch { /* the thread ended */ }
  }
  return ns / 1e6;
}

function forgedSignature(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `sha256=${
    Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")
  }`;
}

async function postForged(baseUrl: string): Promise<string> {
  try {
    const res = await fetch(`${baseUrl}/meta/webhook`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-hub-signature-256": forgedSignature(),
      },
      body: FORGED,
    });
    await res.body?.cancel();
    return String(res.status);
  } catch {
    // Refused before the upload finished: the server closed the connection.
    return "reset";
  }
}

async function timeAccount(
  server: { baseUrl: string; apiKey: string },
  until: () => boolean,
): Promise<number[]> {
  const latencies: number[] = [];
  while (!until()) {
    const t0 = performance.now();
    const res = await api(server, "GET", "/account");
    if (res.status !== 200) throw new Error(`GET /account: ${res.status}`);
    latencies.push(performance.now() - t0);
  }
  return latencies;
}

function line(label: string, values: number[]): string {
  const s = summary(values);
  return `${label}: n=${values.length} p50 ${ms(s.p50)}  p99 ${
    ms(s.p99)
  }  max ${ms(s.max)}`;
}

/** Child mode: `FLOOD_MODE <baseUrl> <loops> <ms>` prints the statuses as JSON. */
async function floodChild([baseUrl, loops, durationMs]: string[]) {
  const statuses: Record<string, number> = {};
  const end = performance.now() + Number(durationMs);
  await Promise.all(Array.from({ length: Number(loops) }, async () => {
    while (performance.now() < end) {
      const status = await postForged(baseUrl!);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  }));
  console.log(JSON.stringify(statuses));
}

if (Deno.args[0] === FLOOD_MODE) {
  await floodChild(Deno.args.slice(1));
  Deno.exit(0);
}

const flags = numberFlags({ flood: 6, duration: 5 });
const server = await startDevServer();
try {
  console.log(machine());
  const durationMs = flags.duration * 1000;

  const idleStart = cpuMs(server.pid);
  await sleep(1000);
  const idlePerMs = (cpuMs(server.pid) - idleStart) / 1000;

  const baselineStart = performance.now();
  const baselineEnd = baselineStart + durationMs;
  const cpuBaseline = cpuMs(server.pid);
  const baseline = await timeAccount(
    server,
    () => performance.now() > baselineEnd,
  );
  const accountCpu = (cpuMs(server.pid) - cpuBaseline -
    idlePerMs * (performance.now() - baselineStart)) / baseline.length;
  console.log(
    `${line("GET /account, idle", baseline)}  (server CPU ${
      ms(accountCpu)
    } each)`,
  );

  let read = 0;
  let cpuRead = 0;
  for (let i = 0; i < 20; i++) {
    const c0 = cpuMs(server.pid);
    const t0 = performance.now();
    const status = await postForged(server.baseUrl);
    if (status !== "401") break;
    cpuRead += cpuMs(server.pid) - c0 - idlePerMs * (performance.now() - t0);
    read++;
  }
  console.log(
    `forged 3 MB post read and refused 401: ${read} posts, server CPU ${
      ms(cpuRead / Math.max(1, read))
    } per post`,
  );

  const c0 = cpuMs(server.pid);
  const t0 = performance.now();
  const flood = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL(import.meta.url).pathname,
      FLOOD_MODE,
      server.baseUrl,
      String(flags.flood),
      String(durationMs),
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  await sleep(500); // the child starts its loops
  const floodEnd = t0 + 500 + durationMs;
  const during = await timeAccount(
    server,
    () => performance.now() > floodEnd,
  );
  const statuses = new Map<string, number>(
    Object.entries(JSON.parse(new TextDecoder().decode((await flood).stdout))),
  );
  // Less the idle rate and the GET /account requests served meanwhile.
  const floodCpu = cpuMs(server.pid) - c0 -
    idlePerMs * (performance.now() - t0) - accountCpu * during.length;
  const posts = [...statuses.values()].reduce((a, b) => a + b, 0);
  console.log(line(`GET /account, ${flags.flood} forged loops`, during));
  console.log(
    `flood: ${posts} forged 3 MB posts (${
      [...statuses].map(([s, n]) => `${s}: ${n}`).join(", ")
    }), server CPU ${ms(floodCpu / Math.max(1, posts))} per post, ${
      ms(floodCpu)
    } in all over ${flags.duration} s`,
  );
} finally {
  await server.stop();
}

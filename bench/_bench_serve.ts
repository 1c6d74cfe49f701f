/**
 * Production-shaped benchmark setup: the upstream simulator as its own process
 * and `main.ts serve` against it (its own DATA_DIR, migrated, an account and a
 * key with a lifted rate limit made through the admin CLI), started with the
 * e2e tier's helpers. With taskset and two or more cores, the benchmark itself
 * and the simulator share core 0 and the server is alone on core 1; otherwise
 * everything runs unpinned and `pinning` says why. Also reads process CPU time
 * from /proc.
 */
import {
  cliJson,
  runCli,
  type ServerProcess,
  type SimulatorProcess,
  startEngineSetup,
  startServer,
  within,
} from "../tests/e2e/_process.ts";
import { type Json, serverFlags } from "./_bench.ts";

const APP_SECRET = "bench-app-secret";
const ACCOUNT = "bench";
const STOP_TIMEOUT_MS = 20_000;
const SERVER_CORE = 1;
const OTHER_CORE = 0;

export interface ServeBench {
  /** http://127.0.0.1:PORT of `serve`. */
  baseUrl: string;
  apiKey: string;
  accountSlug: string;
  /** http://127.0.0.1:PORT of the simulator process (its /_sim control API). */
  simulatorUrl: string;
  server: ServerProcess;
  sim: SimulatorProcess;
  /** How the processes are placed, for the report. */
  pinning: string;
  /** Runs `main.ts <args> --json` against the server's DATA_DIR. */
  cli(args: string[]): Promise<Json>;
  /** Lines the server wrote to stderr (LOG_LEVEL=warn). */
  stderrLines(): string[];
  stop(): Promise<void>;
}

/** Sets the CPU affinity (a list such as "1" or "0-1") of every thread of `pid`; false when taskset is missing or refused. */
async function pin(pid: number, cpus: string): Promise<boolean> {
  try {
    const out = await new Deno.Command("taskset", {
      args: ["-a", "-p", "-c", cpus, String(pid)],
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false; // taskset is not installed
  }
}

/** The distinct CPU lists the threads of `pid` may run on (e.g. ["1"] when pinned). */
export function threadCores(pid: number): string[] {
  const lists = new Set<string>();
  for (const task of Deno.readDirSync(`/proc/${pid}/task`)) {
    const status = Deno.readTextFileSync(
      `/proc/${pid}/task/${task.name}/status`,
    );
    const line = status.split("\n").find((l) =>
      l.startsWith("Cpus_allowed_list:")
    );
    if (line) lists.add(line.split(":")[1]!.trim());
  }
  return [...lists];
}

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond) return ticksPerSecond;
  try {
    const out = new Deno.Command("getconf", { args: ["CLK_TCK"] }).outputSync();
    ticksPerSecond = Number(new TextDecoder().decode(out.stdout).trim()) || 100;
  } catch {
    ticksPerSecond = 100;
  }
  return ticksPerSecond;
}

/** utime + stime in clock ticks from the text of /proc/<pid>/stat. */
export function statCpuTicks(stat: string): number {
  // The command name may hold spaces and ")": fields restart after the last ")".
  // There state is field 3, utime 14 and stime 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** utime + stime of a process (all its threads) in ms. */
export function cpuMs(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  return (statCpuTicks(stat) * 1000) / clockTicks();
}

/**
 * Starts the simulator process, prepares a fresh DATA_DIR through the CLI
 * (migrate, account, key, then `prepare` for channels and templates), starts
 * `serve` on it and pins the processes. `env` adds to the server's settings.
 */
export async function startServeBench(options: {
  env?: Record<string, string>;
  prepare?: (cli: (args: string[]) => Promise<Json>) => Promise<void>;
  /** false: run unpinned even where taskset works. */
  pin?: boolean;
}): Promise<ServeBench> {
  const cores = navigator.hardwareConcurrency;
  let pinning = "unpinned: ";
  let canPin = false;
  if (options.pin === false) pinning += "--pin 0";
  else if (cores < 2) pinning += `only ${cores} core`;
  // Children inherit the affinity: the simulator and the CLI start on core 0 with this process.
  else if (!await pin(Deno.pid, `${OTHER_CORE}`)) {
    pinning += "taskset is missing or refused";
  } else canPin = true;
  const setup = await startEngineSetup({
    appSecret: APP_SECRET,
    dataDirPrefix: "bmbench-serve-",
    env: { WEBHOOK_ALLOW_HTTP: "true", LOG_LEVEL: "warn", ...options.env },
  });
  const { sim, dataDir, env, port } = setup;
  const cli = (args: string[]) => cliJson(args, env);
  let server: ServerProcess | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () => stopping ??= stopAll();
  const onInterrupt = () => {
    stop().finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  const stopAll = async () => {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    if (server) {
      server.proc.signal("SIGTERM");
      const status = await within(server.proc.status, STOP_TIMEOUT_MS, "serve")
        .catch(() => undefined);
      if (!status) {
        server.proc.signal("SIGKILL");
        await server.proc.status;
      }
    }
    await sim[Symbol.asyncDispose]();
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  };
  try {
    const migrated = await runCli(["migrate"], env);
    if (migrated.code !== 0) throw new Error(`migrate: ${migrated.stderr}`);
    await cli(["accounts", "create", "--name", "Bench", "--slug", ACCOUNT]);
    const { key } = await cli([
      "keys",
      "create",
      ...["--account", ACCOUNT, "--scopes", "all"],
      ...["--rate-limit", "100000000", "--name", "bench"],
    ]);
    await options.prepare?.(cli);
    server = await startServer({
      env,
      port,
      dataDir,
      denoFlags: serverFlags(),
    });
    if (canPin) {
      const pinned = await pin(server.proc.child.pid, `${SERVER_CORE}`) &&
        await pin(sim.proc.child.pid, `${OTHER_CORE}`);
      if (pinned) {
        pinning =
          `server pinned alone to core ${SERVER_CORE}; simulator, client and webhook receiver on core ${OTHER_CORE}`;
      } else {
        // Do not leave everything crowded on core 0.
        const all = `0-${cores - 1}`;
        for (
          const pid of [Deno.pid, sim.proc.child.pid, server.proc.child.pid]
        ) {
          await pin(pid, all);
        }
        pinning = "unpinned: taskset refused to pin the server";
      }
    }
    const running = server;
    return {
      baseUrl: running.baseUrl,
      apiKey: key,
      accountSlug: ACCOUNT,
      simulatorUrl: sim.url,
      server: running,
      sim,
      pinning,
      cli,
      stderrLines: () => running.proc.stderr.split("\n"),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

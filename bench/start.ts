// deno-lint-ignore-file no-console
/**
 * Start to ready and idle memory of `serve` (a file: database, media on disk, no simulator):
 * `deno run -A bench/start.ts [--runs 5] [--idle-ms 3000]`; with APP_BIN set
 * (e.g. `APP_BIN=dist/bmserver`), that compiled binary instead.
 *
 * `serve` is measured the way `deno task start` runs it: the bundle `deno task build` writes
 * (built once here, first, into a temporary directory), with the start task's own command
 * line (its V8 flags included), read from deno.json so the two cannot drift apart. `serve from source` (`deno run -A
 * --unstable-lazy-dynamic-imports main.ts serve`, how `deno task dev` and the e2e tests run)
 * is measured too.
 *
 * Migrates a fresh DATA_DIR once, then starts the server --runs times and measures, for each,
 * the wall time from spawn to the first 200 from /readyz (polled every millisecond), the CPU
 * time the process had used by then (a fairer figure on a busy machine), and VmRSS from
 * /proc/<pid>/status after --idle-ms with no traffic. `dev` (simulator and demo account
 * in-process) is measured the same way for information, and so is Deno's own share: an empty
 * program (spawn to exit) and a bare Deno.serve answering /readyz. The reference beside them
 * is issue 7's own (its table: "Hono + node:sqlite server", 27 ms and 39 MB when it was
 * filed): `_start_reference.ts`, from source, in the same run.
 */
import { LAZY, machine, numberFlags, percentile, sleep } from "./_bench.ts";
import { buildBundle, startTaskArgs } from "../scripts/_bundle.ts";

const { runs, "idle-ms": idleMs } = numberFlags({ runs: 5, "idle-ms": 3000 });
const ROOT = new URL("../", import.meta.url).pathname;
const HOST = "127.0.0.1";
const REFERENCE = `${ROOT}bench/_start_reference.ts`;
const SECRET_KEY = "bench-start-secret-key-0123456789abcdef";
const START_TIMEOUT_MS = 30_000;

interface Run {
  readyMs: number;
  /** CPU time (user + system, all threads) the process had used when ready. */
  cpuMs: number;
  rssMb: number;
}

function freePort(): number {
  const listener = Deno.listen({ hostname: HOST, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** The program's command line from source: APP_BIN, or `deno run -A <LAZY> main.ts` (as `deno task dev` runs it). */
function program(args: string[]): [string, string[]] {
  const bin = Deno.env.get("APP_BIN");
  return bin
    ? [bin, args]
    : [Deno.execPath(), ["run", "-A", LAZY, "main.ts", ...args]];
}

function appEnv(dataDir: string, port: number): Record<string, string> {
  return {
    PORT: String(port),
    HOST,
    DATA_DIR: dataDir,
    DATABASE_URL: `file:${dataDir}/app.db`,
    MEDIA_STORE: `file:${dataDir}/media`,
    SECRET_KEY,
    PUBLIC_BASE_URL: `http://${HOST}:${port}`,
    META_APP_SECRET: "bench-start-app-secret",
    LOG_LEVEL: "warn",
  };
}

/** utime + stime from /proc/<pid>/stat, in ms (10 ms ticks). */
function cpuMs(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const kb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]);
  return kb / 1024;
}

/** Spawns `cmd`, times spawn to the first 200 from /readyz, then reads VmRSS after idleMs. */
async function measure(
  cmd: string,
  args: string[],
  env: Record<string, string>,
  port: number,
): Promise<Run> {
  const url = `http://${HOST}:${port}/readyz`;
  const started = performance.now();
  const child = new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    env,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let exited = false;
  child.status.then(() => exited = true);
  try {
    let readyMs = NaN;
    let cpu = NaN;
    while (performance.now() - started < START_TIMEOUT_MS && !exited) {
      const ok = await fetch(url).then(async (res) => {
        await res.body?.cancel();
        return res.status === 200;
      }, () => false);
      if (ok) {
        readyMs = performance.now() - started;
        cpu = cpuMs(child.pid);
        break;
      }
      await sleep(1);
    }
    if (Number.isNaN(readyMs)) throw new Error("not ready");
    await sleep(idleMs);
    return { readyMs, cpuMs: cpu, rssMb: rssMb(child.pid) };
  } catch (err) {
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await child.status;
    throw new Error(
      `${cmd} ${args.join(" ")}: ${(err as Error).message}\n${await stderr}`,
    );
  } finally {
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    await child.status;
    await stderr;
  }
}

async function series(
  label: string,
  start: (port: number) => [string, string[], Record<string, string>],
): Promise<void> {
  const results: Run[] = [];
  for (let i = 0; i < runs; i++) {
    const port = freePort();
    const [cmd, args, env] = start(port);
    const run = await measure(cmd, args, env, port);
    results.push(run);
    console.log(
      `  ${label} run ${i + 1}: ready ${run.readyMs.toFixed(0)} ms (CPU ${
        run.cpuMs.toFixed(0)
      } ms), idle RSS ${run.rssMb.toFixed(1)} MB`,
    );
  }
  console.log(
    `${label}: median ready ${
      percentile(results.map((r) => r.readyMs), 50).toFixed(0)
    } ms (CPU ${
      percentile(results.map((r) => r.cpuMs), 50).toFixed(0)
    } ms), median idle RSS ${
      percentile(results.map((r) => r.rssMb), 50).toFixed(1)
    } MB\n`,
  );
}

/** Median wall time of `deno run -A file` for a program that exits at once. */
async function denoExitMs(file: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", file],
      stdout: "null",
      stderr: "null",
    }).output();
    times.push(performance.now() - started);
  }
  return percentile(times, 50);
}

async function migrate(dataDir: string): Promise<void> {
  const [cmd, args] = program(["migrate"]);
  const out = await new Deno.Command(cmd, {
    args,
    cwd: ROOT,
    env: appEnv(dataDir, 0),
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`migrate failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

const tmp = await Deno.makeTempDir({ prefix: "bench-start-" });
try {
  console.log(
    `${machine()}; ${runs} runs each, RSS read ${idleMs} ms after ready; ${
      Deno.env.get("APP_BIN") ?? "the start task and main.ts"
    }\n`,
  );
  const empty = `${tmp}/empty.ts`;
  const bare = `${tmp}/bare_serve.ts`;
  await Deno.writeTextFile(empty, "");
  await Deno.writeTextFile(
    bare,
    `Deno.serve({ hostname: "${HOST}", port: Number(Deno.args[0]), onListen() {} }, () => new Response("ok"));\n`,
  );
  console.log(
    `Deno itself: an empty program runs in ${
      (await denoExitMs(empty)).toFixed(0)
    } ms (median, spawn to exit)`,
  );
  await series(
    "bare Deno.serve",
    (port) => [Deno.execPath(), ["run", "-A", bare, String(port)], {}],
  );
  await series("reference: Hono + node:sqlite (issue 7's table)", (port) => [
    Deno.execPath(),
    ["run", "-A", REFERENCE, String(port), `${tmp}/reference.db`],
    {},
  ]);

  const serveDir = `${tmp}/serve`;
  await migrate(serveDir);
  if (Deno.env.get("APP_BIN")) {
    await series("serve", (port) => {
      const [cmd, args] = program(["serve"]);
      return [cmd, args, appEnv(serveDir, port)];
    });
  } else {
    // Its own directory: a build into dist/server would delete the chunks a
    // server started from there may still need.
    const bundleDir = `${tmp}/bundle`;
    await buildBundle(bundleDir);
    const args = await startTaskArgs(bundleDir);
    console.log(`serve as \`deno task start\` runs it: deno ${args.join(" ")}`);
    await series(
      "serve",
      (port) => [Deno.execPath(), args, appEnv(serveDir, port)],
    );
    await series("serve from source", (port) => {
      const [cmd, args] = program(["serve"]);
      return [cmd, args, appEnv(serveDir, port)];
    });
  }

  const devDir = `${tmp}/dev`;
  await migrate(devDir);
  await series("dev (for information)", (port) => {
    const [cmd, args] = program(["dev"]);
    return [cmd, args, { ...appEnv(devDir, port), SIMULATOR_PORT: "0" }];
  });
} finally {
  await Deno.remove(tmp, { recursive: true });
}

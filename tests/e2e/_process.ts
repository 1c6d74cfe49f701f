// deno-lint-ignore-file no-explicit-any
// Spawns the real program (APP_BIN, or `deno run -A main.ts`) as child
// processes: the server in serve or dev mode, the upstream simulator, and
// one-shot admin commands. Output is collected for diagnostics.
import { ENV_NAMES } from "../../src/config.ts";
import { fileURLToPath } from "node:url";
import { freePort, waitFor } from "../_support/wait.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const MAIN = fileURLToPath(new URL("../../main.ts", import.meta.url));

/** A 32+ character SECRET_KEY for tests. */
export const TEST_SECRET_KEY = "e2e-secret-key-0123456789abcdef-0123456789";

/** Variables the program reads: never inherited from the test's own environment. */
const APP_ENV = new Set(ENV_NAMES);

/** Output kept per stream; older text is dropped. */
const MAX_OUTPUT_CHARS = 4_000_000;

/** The program's command line for `args`. */
export function programCommand(
  args: string[],
  denoFlags: string[] = [],
  runArgs?: string[],
): { cmd: string; args: string[] } {
  const bin = Deno.env.get("APP_BIN");
  if (bin) return { cmd: bin, args };
  if (runArgs) return { cmd: Deno.execPath(), args: [...runArgs, ...args] };
  return {
    cmd: Deno.execPath(),
    // As `deno task dev` runs main.ts: a dynamic import is read when it runs.
    args: [
      "run",
      "-A",
      "--unstable-lazy-dynamic-imports",
      ...denoFlags,
      MAIN,
      ...args,
    ],
  };
}

export function childEnv(
  env: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(Deno.env.toObject())) {
    if (!APP_ENV.has(k)) out[k] = v;
  }
  return { ...out, ...env };
}

/** A spawned program with its output collected. */
export class Proc {
  readonly child: Deno.ChildProcess;
  readonly status: Promise<Deno.CommandStatus>;
  #out = "";
  #err = "";
  #pumps: Promise<void>[];

  constructor(
    args: string[],
    env: Record<string, string>,
    denoFlags: string[] = [],
    runArgs?: string[],
  ) {
    const { cmd, args: argv } = programCommand(args, denoFlags, runArgs);
    this.child = new Deno.Command(cmd, {
      args: argv,
      env: childEnv(env),
      clearEnv: true,
      cwd: REPO_ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    this.#pumps = [
      this.#pump(this.child.stdout, (t) => this.#out = keep(this.#out + t)),
      this.#pump(this.child.stderr, (t) => this.#err = keep(this.#err + t)),
    ];
    this.status = this.child.status.then(async (s) => {
      await Promise.all(this.#pumps);
      return s;
    });
  }

  get stdout(): string {
    return this.#out;
  }

  get stderr(): string {
    return this.#err;
  }

  /** The tail of both streams, for assertion messages. */
  output(chars = 6_000): string {
    return `--- stdout ---\n${this.#out.slice(-chars)}\n--- stderr ---\n${
      this.#err.slice(-chars)
    }`;
  }

  /** Sends a signal unless the process already ended. */
  signal(signal: Deno.Signal): void {
    try {
      this.child.kill(signal);
    } catch (err) {
      if (!(err instanceof TypeError)) throw err; // already exited
    }
  }

  async #pump(
    stream: ReadableStream<Uint8Array>,
    sink: (text: string) => void,
  ): Promise<void> {
    for await (const text of stream.pipeThrough(new TextDecoderStream())) {
      sink(text);
    }
  }
}

function keep(text: string): string {
  return text.length > MAX_OUTPUT_CHARS
    ? text.slice(-MAX_OUTPUT_CHARS / 2)
    : text;
}

/** Waits for `promise`, or throws after `ms` naming `what`. */
export async function within<T>(
  promise: Promise<T>,
  ms: number,
  what: string,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`Timed out after ${ms} ms: ${what}`)),
          ms,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

async function waitUntilServing(
  proc: Proc,
  url: string,
  what: string,
  timeoutMs: number,
): Promise<void> {
  let exited: Deno.CommandStatus | undefined;
  proc.status.then((s) => exited = s);
  try {
    await waitFor(async () => {
      if (exited) {
        throw new Error(`process exited with code ${exited.code}`);
      }
      const res = await fetch(url).catch(() => undefined);
      await res?.body?.cancel();
      return res?.ok ?? false;
    }, { timeoutMs, intervalMs: 50, what });
  } catch (err) {
    proc.signal("SIGKILL");
    await proc.status;
    throw new Error(`${(err as Error).message}\n${proc.output()}`);
  }
  if (exited) {
    throw new Error(`${what}: process exited\n${proc.output()}`);
  }
}

export interface ServerOptions {
  command?: "serve" | "dev";
  /** Added to PORT and DATA_DIR (which default to a free port and a fresh temp dir). */
  env?: Record<string, string>;
  port?: number;
  dataDir?: string;
  /** @default 60_000 */
  readyTimeoutMs?: number;
  /** HOST=127.0.0.1 is set unless this is true (then the program's own default applies). */
  defaultHost?: boolean;
  /** Flags of `deno run` before main.ts (e.g. --cpu-prof); ignored with APP_BIN. */
  denoFlags?: string[];
  /**
   * Deno's whole command line up to the program's command (`run`, flags,
   * a bundle's main.js: the start task's, see scripts/_bundle.ts), instead
   * of main.ts with denoFlags; ignored with APP_BIN.
   */
  runArgs?: string[];
}

export interface ServerProcess extends AsyncDisposable {
  command: "serve" | "dev";
  port: number;
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  dataDir: string;
  env: Record<string, string>;
  proc: Proc;
  /** Date.now() when the process was spawned. */
  startedAt: number;
  /** SIGKILL, and wait for the process to be gone. */
  kill9(): Promise<Deno.CommandStatus>;
  /** SIGTERM, and wait for the exit status. */
  stop(): Promise<Deno.CommandStatus>;
  /** A new process with the same command, env, port and DATA_DIR (the old one must be gone). */
  restart(): Promise<ServerProcess>;
  output(): string;
}

/** Starts the program on a free port with its own DATA_DIR and waits for /readyz. */
export async function startServer(
  options: ServerOptions = {},
): Promise<ServerProcess> {
  const command = options.command ?? "serve";
  const port = options.port ?? freePort();
  const ownDir = !options.dataDir;
  const dataDir = options.dataDir ??
    await Deno.makeTempDir({ prefix: "bm-e2e-" });
  const baseUrl = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    ...(options.defaultHost ? {} : { HOST: "127.0.0.1" }),
    PUBLIC_BASE_URL: baseUrl,
    // serve refuses to start without one (dev makes its own); tests that
    // post to /meta/webhook set theirs.
    ...(command === "serve"
      ? {
        META_APP_SECRET: "e2e-default-app-secret",
        // No proxy watches /readyz here: stop at once (the rolling restart test sets its own).
        SHUTDOWN_DELAY_MS: "0",
      }
      : {}),
    // The simulator (the only upstream in these tests) serves media from 127.0.0.1 over http.
    MEDIA_DOWNLOAD_HOSTS: "127.0.0.1",
    MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: "true",
    ...options.env,
    PORT: String(port),
    DATA_DIR: dataDir,
  };
  const startedAt = Date.now();
  const proc = new Proc([command], env, options.denoFlags, options.runArgs);
  await waitUntilServing(
    proc,
    `${baseUrl}/readyz`,
    `${command} on port ${port} to be ready`,
    options.readyTimeoutMs ?? 60_000,
  );
  const server: ServerProcess = {
    command,
    port,
    baseUrl,
    dataDir,
    env,
    proc,
    startedAt,
    async kill9() {
      proc.signal("SIGKILL");
      return await proc.status;
    },
    async stop() {
      proc.signal("SIGTERM");
      return await proc.status;
    },
    restart: () =>
      startServer({ ...options, command, port, dataDir, env: options.env }),
    output: () => proc.output(),
    async [Symbol.asyncDispose]() {
      proc.signal("SIGKILL");
      await proc.status;
      if (ownDir) await Deno.remove(dataDir, { recursive: true });
    },
  };
  return server;
}

export interface SimulatorProcess extends AsyncDisposable {
  /** http://127.0.0.1:PORT (the /_sim control API lives here). */
  url: string;
  /** The META_GRAPH_URL to point the server at. */
  graphUrl: string;
  proc: Proc;
}

/** Starts `main.ts simulator` as its own process and waits until it answers. */
export async function startSimulatorProcess(options: {
  appSecret: string;
  callbackUrl?: string;
  throughput?: number;
}): Promise<SimulatorProcess> {
  const port = freePort();
  const args = [
    "simulator",
    "--port",
    String(port),
    "--app-secret",
    options.appSecret,
  ];
  if (options.callbackUrl) args.push("--callback-url", options.callbackUrl);
  if (options.throughput) {
    args.push("--throughput", String(options.throughput));
  }
  const proc = new Proc(args, {});
  const url = `http://127.0.0.1:${port}`;
  await waitUntilServing(
    proc,
    `${url}/_sim/behaviour`,
    `simulator on port ${port}`,
    60_000,
  );
  return {
    url,
    graphUrl: `${url}/v22.0`,
    proc,
    async [Symbol.asyncDispose]() {
      proc.signal("SIGTERM");
      const status = await within(proc.status, 10_000, "simulator to stop")
        .catch(() => undefined);
      if (!status) {
        proc.signal("SIGKILL");
        await proc.status;
      }
    },
  };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON when it is JSON. */
  json: any;
}

/** Runs one admin command to completion (add --json yourself to get `json`). */
export async function runCli(
  args: string[],
  env: Record<string, string>,
): Promise<CliResult> {
  const proc = new Proc(args, env);
  const status = await within(proc.status, 60_000, `main.ts ${args[0]}`);
  let json: unknown;
  try {
    json = JSON.parse(proc.stdout);
  } catch {
    json = undefined;
  }
  return { code: status.code, stdout: proc.stdout, stderr: proc.stderr, json };
}

/** runCli that must succeed; returns the parsed JSON output. */
export async function cliJson(
  args: string[],
  env: Record<string, string>,
): Promise<any> {
  const r = await runCli([...args, "--json"], env);
  if (r.code !== 0 || r.json === undefined) {
    throw new Error(
      `main.ts ${
        args.join(" ")
      } failed with code ${r.code}\n${r.stdout}\n${r.stderr}`,
    );
  }
  return r.json;
}

export { api, type ApiResponse, simGet, simPost } from "./_http.ts";

/** A simulator process that calls back a server on `port`, an empty DATA_DIR, and the env `serve` needs for both. */
export interface EngineSetup {
  port: number;
  sim: SimulatorProcess;
  dataDir: string;
  env: Record<string, string>;
}

/** Starts the simulator for a server to come on a free port; `env` adds to (or overrides) the base settings. */
export async function startEngineSetup(options: {
  appSecret: string;
  dataDirPrefix: string;
  env?: Record<string, string>;
}): Promise<EngineSetup> {
  const port = freePort();
  const sim = await startSimulatorProcess({
    appSecret: options.appSecret,
    callbackUrl: `http://127.0.0.1:${port}/meta/webhook`,
  });
  const dataDir = await Deno.makeTempDir({ prefix: options.dataDirPrefix });
  const env = {
    DATA_DIR: dataDir,
    SECRET_KEY: TEST_SECRET_KEY,
    META_APP_SECRET: options.appSecret,
    META_VERIFY_TOKEN: "e2e-verify-token",
    META_GRAPH_URL: sim.graphUrl,
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    LOG_LEVEL: "warn",
    ...options.env,
  };
  return { port, sim, dataDir, env };
}

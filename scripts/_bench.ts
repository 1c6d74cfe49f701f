// deno-lint-ignore-file no-console
/**
 * Shared benchmark harness: starts `main.ts dev` as a child process (temp DATA_DIR, free port,
 * LOG_LEVEL=warn, 127.0.0.1 only), creates an API key with a lifted rate limit through the CLI,
 * and offers a bounded concurrent load loop, percentiles and clean shutdown.
 */
import { parseArgs } from "node:util";

// deno-lint-ignore no-explicit-any
export type Json = any;

const ROOT = new URL("../", import.meta.url).pathname;
const HOST = "127.0.0.1";
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;

export interface DevServer {
  /** http://127.0.0.1:PORT */
  baseUrl: string;
  apiKey: string;
  accountId: string;
  accountSlug: string;
  channelId: string;
  phoneNumber: string;
  /** http://127.0.0.1:PORT of the in-process upstream simulator. */
  simulatorUrl: string;
  dataDir: string;
  /** Lines the server wrote to stderr (warnings and errors at LOG_LEVEL=warn). */
  stderrLines(): string[];
  stop(): Promise<void>;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort(): number {
  const listener = Deno.listen({ hostname: HOST, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Parses --concurrency/--duration style flags into numbers, with defaults. */
export function numberFlags<T extends Record<string, number>>(
  defaults: T,
): T {
  const { values } = parseArgs({
    args: Deno.args,
    options: Object.fromEntries(
      Object.keys(defaults).map((k) => [k, { type: "string" as const }]),
    ),
  });
  const out: Record<string, number> = { ...defaults };
  for (const [k, v] of Object.entries(values)) {
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0) {
      throw new Error(`--${k} must be a positive number, got "${v}"`);
    }
    out[k] = n;
  }
  return out as T;
}

/** Runs `main.ts <args> --json` against the server's DATA_DIR and returns the parsed output. */
export async function cli(
  server: Pick<DevServer, "dataDir">,
  args: string[],
): Promise<unknown> {
  const secret = (await Deno.readTextFile(`${server.dataDir}/secret.key`))
    .trim();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", ...args, "--json"],
    cwd: ROOT,
    env: { DATA_DIR: server.dataDir, SECRET_KEY: secret, LOG_LEVEL: "warn" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(
      `CLI ${args.slice(0, 2).join(" ")} failed: ${
        new TextDecoder().decode(out.stderr)
      }`,
    );
  }
  return JSON.parse(text);
}

async function waitForFile(path: string, child: Deno.ChildProcess) {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let exited = false;
  child.status.then(() => exited = true);
  while (Date.now() < deadline) {
    if (exited) throw new Error("The dev server exited while starting");
    try {
      return JSON.parse(await Deno.readTextFile(path));
    } catch { /* not written yet (or half written) */ }
    await sleep(100);
  }
  throw new Error(`The dev server did not write ${path} in time`);
}

/** Starts `deno run -A main.ts dev` in a temp DATA_DIR and returns its credentials (with a 1e8/min key). */
export async function startDevServer(
  opts: { env?: Record<string, string> } = {},
): Promise<DevServer> {
  const dataDir = await Deno.makeTempDir({ prefix: "bmbench-" });
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "main.ts", "dev"],
    cwd: ROOT,
    env: {
      PORT: String(port),
      HOST,
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      ...opts.env,
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const pump = (async () => {
    let rest = "";
    for await (
      const chunk of child.stderr.pipeThrough(new TextDecoderStream())
    ) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const line of parts) if (lines.length < 100_000) lines.push(line);
    }
    if (rest) lines.push(rest);
  })();
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      try {
        child.kill("SIGTERM");
      } catch { /* already gone */ }
      const timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch { /* already gone */ }
      }, STOP_TIMEOUT_MS);
      await child.status;
      clearTimeout(timer);
      await pump.catch(() => {});
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    })();
    return stopping;
  };
  const onInterrupt = () => {
    stop().finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onInterrupt);
  try {
    const creds = await waitForFile(`${dataDir}/dev-credentials.json`, child);
    const simulatorUrl = String(creds.simulatorUrl).replace(
      "localhost",
      HOST,
    );
    // dev registers the demo number at the simulator right after writing the file.
    await waitUntil(async () => {
      const res = await fetch(`${simulatorUrl}/_sim/numbers`);
      const { numbers } = await res.json();
      return numbers.length > 0;
    }, 10_000);
    const key = await cli({ dataDir }, [
      "keys",
      "create",
      "--account",
      creds.accountSlug,
      "--scopes",
      "all",
      "--rate-limit",
      "100000000",
      "--name",
      "bench",
    ]) as { key: string };
    return {
      baseUrl: `http://${HOST}:${port}`,
      apiKey: key.key,
      accountId: creds.accountId,
      accountSlug: creds.accountSlug,
      channelId: creds.channelId,
      phoneNumber: creds.phoneNumber,
      simulatorUrl,
      dataDir,
      stderrLines: () => lines,
      stop: async () => {
        Deno.removeSignalListener("SIGINT", onInterrupt);
        await stop();
      },
    };
  } catch (err) {
    Deno.removeSignalListener("SIGINT", onInterrupt);
    await stop();
    if (lines.length) console.error(lines.slice(-20).join("\n"));
    throw err;
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error("Timed out waiting for the dev server");
}

/** An authenticated JSON call to /api/v2; returns status and parsed body. */
export async function api(
  server: Pick<DevServer, "baseUrl" | "apiKey">,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(`${server.baseUrl}/api/v2${path}`, {
    method,
    headers: {
      authorization: `Bearer ${server.apiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch { /* not JSON */ }
  return { status: res.status, body: parsed };
}

/** A plain JSON call to the simulator's control API. */
export async function sim(
  server: Pick<DevServer, "simulatorUrl">,
  method: string,
  path: string,
  body?: unknown,
): Promise<Json> {
  const res = await fetch(`${server.simulatorUrl}/_sim${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) {
    throw new Error(
      `Simulator ${method} ${path} answered ${res.status}: ${await res
        .text()}`,
    );
  }
  return await res.json();
}

/** A distinct Argentine mobile number per n: +54 9 11 xxxx xxxx. */
export function freshNumber(n: number): string {
  return `+54911${String(10_000_000 + (n % 90_000_000)).padStart(8, "0")}`;
}

/** Nearest-rank percentile of unsorted values (p in 0..100); NaN when empty. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summary(values: number[]): {
  p50: number;
  p90: number;
  p99: number;
  max: number;
} {
  return {
    p50: percentile(values, 50),
    p90: percentile(values, 90),
    p99: percentile(values, 99),
    max: values.length ? Math.max(...values) : NaN,
  };
}

export function ms(value: number): string {
  return Number.isNaN(value) ? "n/a" : `${value.toFixed(1)} ms`;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** Latency of each successful request, ms. */
  latencies: number[];
  elapsedMs: number;
  /** Up to 5 distinct error descriptions. */
  errorSamples: string[];
}

/**
 * Runs `task(i)` from `concurrency` loops until the deadline or `maxRequests` (whichever first).
 * A task returns normally on success and throws (or returns an error text) on failure.
 */
export async function runLoad(opts: {
  concurrency: number;
  durationMs: number;
  maxRequests: number;
  task: (i: number) => Promise<string | void>;
}): Promise<LoadResult> {
  const started = performance.now();
  const deadline = started + opts.durationMs;
  let issued = 0;
  const result: LoadResult = {
    requests: 0,
    errors: 0,
    latencies: [],
    elapsedMs: 0,
    errorSamples: [],
  };
  const noteError = (text: string) => {
    result.errors++;
    if (
      result.errorSamples.length < 5 && !result.errorSamples.includes(text)
    ) {
      result.errorSamples.push(text);
    }
  };
  const loop = async () => {
    while (performance.now() < deadline && issued < opts.maxRequests) {
      const i = issued++;
      const t0 = performance.now();
      try {
        const problem = await opts.task(i);
        if (problem) noteError(problem);
        else result.latencies.push(performance.now() - t0);
      } catch (err) {
        noteError(String((err as Error)?.message ?? err));
      }
      result.requests++;
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency }, loop));
  result.elapsedMs = performance.now() - started;
  return result;
}

/** Prints the tail of the server's stderr, if it wrote anything. */
export function reportServerLog(server: DevServer): void {
  const lines = server.stderrLines().filter((l) => l.trim() !== "");
  console.log(`server stderr lines (LOG_LEVEL=warn): ${lines.length}`);
  for (const line of lines.slice(-5)) console.log(`  ${line.slice(0, 300)}`);
}

export function machine(): string {
  return `Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores, ${Deno.build.os}/${Deno.build.arch}`;
}

// deno-lint-ignore-file no-console
/**
 * Shared benchmark harness: starts `main.ts dev` as a child process (temp DATA_DIR, free port,
 * LOG_LEVEL=warn, 127.0.0.1 only), creates an API key with a lifted rate limit through the CLI,
 * and stops it cleanly. Re-exports the numbers side (flags, percentiles, load loop) of
 * _bench_load.ts, so a benchmark imports one module.
 */

// deno-lint-ignore no-explicit-any
export type Json = any;

export * from "./_bench_load.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const HOST = "127.0.0.1";
const START_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 20_000;
/**
 * `deno task dev`'s and `deno task start`'s flag: a statically analyzable
 * dynamic import is read when it runs, not with the program's own modules.
 */
export const LAZY = "--unstable-lazy-dynamic-imports";

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
  /** The tree the server runs from (this one unless startDevServer was given another). */
  root: string;
  /** The server process (its CPU time is in /proc/<pid>). */
  pid: number;
  /** Lines the server wrote to stderr (warnings and errors at LOG_LEVEL=warn). */
  stderrLines(): string[];
  stop(): Promise<void>;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function freePort(): number {
  const listener = Deno.listen({ hostname: HOST, port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

/** Runs `main.ts <args> --json` (of the server's tree) against the server's DATA_DIR and returns the parsed output. */
export async function cli(
  server: Pick<DevServer, "dataDir"> & { root?: string },
  args: string[],
): Promise<unknown> {
  const secret = (await Deno.readTextFile(`${server.dataDir}/secret.key`))
    .trim();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", LAZY, "main.ts", ...args, "--json"],
    cwd: server.root ?? ROOT,
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

/** A new API key of the account (all scopes, rate limit lifted), made through the CLI. */
export async function benchKey(
  server: Pick<DevServer, "dataDir"> & { root?: string },
  accountSlug: string,
): Promise<string> {
  const { key } = await cli(server, [
    "keys",
    "create",
    "--account",
    accountSlug,
    "--scopes",
    "all",
    "--rate-limit",
    "100000000",
    "--name",
    "bench",
  ]) as { key: string };
  return key;
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
/** Extra deno flags for the server under test, from BENCH_SERVER_FLAGS. */
export function serverFlags(): string[] {
  return (Deno.env.get("BENCH_SERVER_FLAGS") ?? "").split(/\s+/)
    .filter((f) => f !== "");
}

export async function startDevServer(
  /** `root`: another tree to run (an older commit's, for a before/after). */
  opts: { env?: Record<string, string>; root?: string } = {},
): Promise<DevServer> {
  const root = opts.root ?? ROOT;
  const dataDir = await Deno.makeTempDir({ prefix: "bmbench-" });
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    // e.g. BENCH_SERVER_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof"
    args: ["run", "-A", LAZY, ...serverFlags(), "main.ts", "dev"],
    cwd: root,
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
    const apiKey = await benchKey({ dataDir, root }, creds.accountSlug);
    return {
      baseUrl: `http://${HOST}:${port}`,
      apiKey,
      accountId: creds.accountId,
      accountSlug: creds.accountSlug,
      channelId: creds.channelId,
      phoneNumber: creds.phoneNumber,
      simulatorUrl,
      dataDir,
      root,
      pid: child.pid,
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

/** The template send of the send and batch benchmarks: `order_update` to freshNumber(n). */
export function templateSendTo(n: number) {
  return {
    to: freshNumber(n),
    type: "template",
    template: {
      name: "order_update",
      language: { code: "es_AR" },
      components: [{
        type: "body",
        parameters: [
          { type: "text", text: `Cliente ${n}` },
          { type: "text", text: `#${100_000 + n}` },
        ],
      }],
    },
  };
}

/** A batch item of the batch benchmarks: templateSendTo(n) with a client reference. */
export function batchItem(n: number) {
  return { ...templateSendTo(n), clientRef: `bench-${n}` };
}

/** Prints the tail of the server's stderr, if it wrote anything. */
export function reportServerLog(server: Pick<DevServer, "stderrLines">): void {
  const lines = server.stderrLines().filter((l) => l.trim() !== "");
  console.log(`server stderr lines (LOG_LEVEL=warn): ${lines.length}`);
  for (const line of lines.slice(-5)) console.log(`  ${line.slice(0, 300)}`);
}

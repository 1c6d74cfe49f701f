/**
 * The processes of one scale-out phase: a fresh database (an embedded SQLite
 * file, or a fresh `sqld`), an account with one channel per number, the
 * campaign template and two keys made through the admin CLI, and N `serve`
 * instances on it, each with its own PORT and DATA_DIR, the same
 * SECRET_KEY, META_APP_SECRET and PUBLIC_BASE_URL (the proxy's), and its own
 * META_GRAPH_URL on the strict upstream (`/i/<name>/v22.0`) so every send
 * names its instance. Also spawns the harness's helper processes (the
 * strict upstream, the proxy).
 */
import {
  cliJson,
  runCli,
  type ServerProcess,
  startServer,
  TEST_SECRET_KEY,
  within,
} from "../tests/e2e/_process.ts";
import { type Sqld, startSqld } from "../tests/_support/sqld.ts";
import {
  fileDb,
  type HarnessDb,
  prepareProbe,
  sqldDb,
} from "./_scaleout_db.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const ACCOUNT = "scaleout";
const WABA_ID = "102290129340777";
const STOP_TIMEOUT_MS = 20_000;
/** The campaign's template: templateSendTo() in _bench.ts fills its two parameters. */
export const TEMPLATE = {
  name: "order_update",
  language: "es_AR",
  components: [{
    type: "BODY",
    text: "Hola {{1}}, tu pedido {{2}} está en camino",
  }],
};

export interface Channel {
  /** The channel's id in the API (a batch's defaultPhoneNumberId). */
  id: string;
  /** The upstream phone-number id the strict upstream sees. */
  upstreamId: string;
  label: string;
}

export interface Instance {
  name: string;
  /** Replaced when the instance is restarted. */
  server: ServerProcess;
  /** The stderr of its earlier processes (before restarts). */
  earlierOutput: string[];
}

export interface Cluster {
  engine: "embedded" | "sqld";
  instances: Instance[];
  sqld: Sqld | undefined;
  db: HarnessDb;
  /** A key with a lifted limit for the campaign and the steady load. */
  loadKey: string;
  /** A key with --rate-limit `limitKeyRate`, for the per-credential check. */
  limitKey: string;
  channels: Channel[];
  /** SIGTERM to every instance (SIGKILL after 20 s); the database stays. */
  stopInstances(): Promise<void>;
  /** Everything: instances, sqld, the data directories. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  engine: "embedded" | "sqld";
  count: number;
  numbers: number;
  rate: number;
  limitKeyRate: number;
  appSecret: string;
  lbUrl: string;
  upstreamUrl: string;
}

/** Clusters not stopped yet: stopAllClusters() ends them (on Ctrl-C). */
const live = new Set<() => Promise<void>>();

/** Stops every cluster still running (instances first, then sqld). */
export async function stopAllClusters(): Promise<void> {
  await Promise.all([...live].map((stop) => stop()));
}

/** A helper script started as its own process; it prints `{"url": ...}` once it listens. */
export interface Helper {
  url: string;
  child: Deno.ChildProcess;
  stop(): Promise<void>;
}

/** Starts `deno run -A <script> <args>` and waits for its URL line. */
export async function startHelper(
  script: string,
  args: string[],
): Promise<Helper> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", script, ...args],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const url = await within(
    (async () => {
      for (;;) {
        const { value, done } = await lines.read();
        if (done) throw new Error(`${script} exited before it listened`);
        text += value;
        const line = text.split("\n").find((l) => l.startsWith("{"));
        if (line) return JSON.parse(line).url as string;
      }
    })(),
    60_000,
    `${script} to listen`,
  ).catch(async (err) => {
    child.kill("SIGKILL");
    await child.status;
    throw err;
  });
  // Keep draining stdout so the helper never blocks on a full pipe.
  (async () => {
    while (!(await lines.read()).done) { /* discard */ }
  })().catch(() => {});
  return {
    url,
    child,
    async stop() {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      const ended = await within(child.status, 10_000, script).catch(() => 0);
      if (!ended) {
        try {
          child.kill("SIGKILL");
        } catch { /* gone */ }
        await child.status;
      }
    },
  };
}

/** SIGTERM, then SIGKILL if the process has not exited within `ms`; resolves with how long it took. */
export async function stopServer(
  server: ServerProcess,
  ms = STOP_TIMEOUT_MS,
): Promise<{ ms: number; killed: boolean }> {
  const t0 = performance.now();
  server.proc.signal("SIGCONT"); // a paused one could not act on SIGTERM
  server.proc.signal("SIGTERM");
  const status = await within(server.proc.status, ms, "serve to stop")
    .catch(() => undefined);
  if (!status) {
    server.proc.signal("SIGKILL");
    await server.proc.status;
  }
  return { ms: performance.now() - t0, killed: !status };
}

/** Starts a fresh database and `count` instances on it, prepared through the CLI. */
export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const dirs: string[] = [];
  const newDir = async () => {
    const dir = await Deno.makeTempDir({ prefix: "bm-scaleout-" });
    dirs.push(dir);
    return dir;
  };
  let sqld: Sqld | undefined;
  const instances: Instance[] = [];
  const stopInstances = async () => {
    await Promise.all(instances.map((i) => stopServer(i.server)));
  };
  const stop = async () => {
    live.delete(stop);
    await stopInstances();
    await sqld?.stop();
    for (const dir of dirs) {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  };
  live.add(stop);
  try {
    const firstDir = await newDir();
    if (opts.engine === "sqld") sqld = await startSqld();
    const dbEnv: Record<string, string> = sqld
      ? { DATABASE_URL: sqld.url }
      : {};
    const cliEnv = {
      ...dbEnv,
      DATA_DIR: firstDir,
      SECRET_KEY: TEST_SECRET_KEY,
      LOG_LEVEL: "warn",
    };
    const migrated = await runCli(["migrate"], cliEnv);
    if (migrated.code !== 0) throw new Error(`migrate: ${migrated.stderr}`);
    const prepared = await prepare(opts, (args) => cliJson(args, cliEnv));
    const db = sqld ? sqldDb(sqld.url) : fileDb(`${firstDir}/app.db`);
    if (sqld) await prepareProbe(db);
    const names = Array.from(
      { length: opts.count },
      (_, i) => String.fromCharCode(97 + i),
    );
    const started = await Promise.allSettled(
      names.map(async (name, i) => {
        const dataDir = i === 0 ? firstDir : await newDir();
        const server = await startServer({
          dataDir,
          env: {
            ...dbEnv,
            SECRET_KEY: TEST_SECRET_KEY,
            META_APP_SECRET: opts.appSecret,
            PUBLIC_BASE_URL: opts.lbUrl,
            META_GRAPH_URL: `${opts.upstreamUrl}/i/${name}/v22.0`,
            LOG_LEVEL: "warn",
          },
        });
        instances.push({ name, server, earlierOutput: [] });
      }),
    );
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw (failed as PromiseRejectedResult).reason;
    instances.sort((a, b) => a.name.localeCompare(b.name));
    return {
      engine: opts.engine,
      instances,
      sqld,
      db,
      ...prepared,
      stopInstances,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** The account, its channels (one per number), the template and the two keys. */
async function prepare(
  opts: ClusterOptions,
  // deno-lint-ignore no-explicit-any
  cli: (args: string[]) => Promise<any>,
): Promise<Pick<Cluster, "loadKey" | "limitKey" | "channels">> {
  await cli(["accounts", "create", "--name", "Scale-out", "--slug", ACCOUNT]);
  const key = (name: string, limit: number) =>
    cli([
      "keys",
      "create",
      ...["--account", ACCOUNT, "--scopes", "all"],
      ...["--rate-limit", String(limit), "--name", name],
    ]).then((k) => k.key as string);
  const channel = async (n: number): Promise<Channel> => {
    const upstreamId = String(300_000_000_000_000 + n);
    const made = await cli([
      "channels",
      "create",
      ...["--account", ACCOUNT, "--phone", `+1555${3_000_000 + n}`],
      ...["--display-name", `Number ${n}`],
      ...["--upstream-phone-number-id", upstreamId, "--waba-id", WABA_ID],
      ...["--access-token", "scaleout-token", "--send-rate", String(opts.rate)],
    ]);
    return { id: made.id, upstreamId, label: `n${n}` };
  };
  const tasks: (() => Promise<unknown>)[] = [
    () =>
      cli([
        "templates",
        "create",
        ...["--account", ACCOUNT, "--name", TEMPLATE.name],
        ...["--language", TEMPLATE.language, "--category", "UTILITY"],
        ...["--status", "approved"],
        ...["--components", JSON.stringify(TEMPLATE.components)],
      ]),
    () => key("load", 100_000_000),
    () => key("limited", opts.limitKeyRate),
    ...Array.from({ length: opts.numbers }, (_, n) => () => channel(n + 1)),
  ];
  // Three CLI processes at a time: each is a whole `deno run` start-up.
  const results: unknown[] = [];
  for (let i = 0; i < tasks.length; i += 3) {
    results.push(...await Promise.all(tasks.slice(i, i + 3).map((t) => t())));
  }
  return {
    loadKey: results[1] as string,
    limitKey: results[2] as string,
    channels: results.slice(3) as Channel[],
  };
}

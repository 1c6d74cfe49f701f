// What `serve` loads: the libSQL client, the S3 client, the simulator, the
// admin CLI and the API route groups only when a configuration, a command or
// a request needs them; zod, libphonenumber's metadata, the job handlers and
// the inbound domain not before the first request or job that uses them. One test reads
// the static module graph (`deno info --json`), the other the modules a real
// `serve` on a file database with media on disk evaluates (`-L debug` logs
// every ES module V8 loads).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { freePort, waitFor } from "../_support/wait.ts";
import { loadedModules } from "../_support/module_log.ts";

const ROOT = new URL("../../", import.meta.url);
const MAIN = new URL("main.ts", ROOT).href;

/** Loaded only by the configuration or command that needs them. */
const LAZY: { what: string; match: (url: string) => boolean }[] = [
  { what: "the libSQL client", match: (u) => /[/:]@?libsql[/+@]/.test(u) },
  {
    what: "libsql_dialect.ts",
    match: (u) => u.endsWith("/db/libsql_dialect.ts"),
  },
  { what: "aws4fetch", match: (u) => u.includes("aws4fetch") },
  {
    what: "s3_blob_store.ts",
    match: (u) => u.endsWith("/storage/s3_blob_store.ts"),
  },
  { what: "the simulator", match: (u) => u.includes("/src/simulator/") },
  {
    what: "the API route groups, their schemas and the OpenAPI generator",
    match: (u) =>
      /\/src\/http\/(routes\/(?!(health|docs|docs_page|meta_webhook|metrics|media_download)\.ts)\w+|schemas\/\w+|openapi|openapi_document)\.ts$/
        .test(u) || u.includes("zod-openapi"),
  },
  { what: "zod", match: (u) => /[/:]zod@/.test(u) },
  {
    what: "node:util (the admin CLI's parseArgs) and node:dns",
    match: (u) => u === "node:util" || u.startsWith("node:dns"),
  },
  { what: "libphonenumber-js", match: (u) => u.includes("libphonenumber-js") },
  {
    what: "the job handlers",
    match: (u) => /\/src\/jobs\/handlers\/(?!job\.ts$)\w+\.ts$/.test(u),
  },
  {
    what: "the inbound domain",
    match: (u) => u.includes("/src/domain/inbound/"),
  },
  {
    what: "the dev and admin CLI",
    match: (u) =>
      /\/src\/cli\/(admin|dev|social_cli|templates_cli|simulator_cli)\.ts$/
        .test(u),
  },
];

function lazyIn(urls: Iterable<string>): string[] {
  return [...urls].filter((u) => LAZY.some((l) => l.match(u)));
}

interface InfoDependency {
  code?: { specifier: string };
  isDynamic?: boolean;
}
interface Info {
  modules: { specifier: string; dependencies?: InfoDependency[] }[];
  redirects: Record<string, string>;
}

async function moduleGraph(): Promise<Info> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", MAIN],
    cwd: fileURLToPath(ROOT),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** Modules reachable from main.ts through code imports (and dynamic ones when asked). */
function reachable(info: Info, followDynamic: boolean): Set<string> {
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const stack = [MAIN];
  while (stack.length) {
    const specifier = stack.pop()!;
    const target = info.redirects[specifier] ?? specifier;
    if (seen.has(target)) continue;
    seen.add(target);
    for (const dep of modules.get(target)?.dependencies ?? []) {
      if (dep.code && (followDynamic || !dep.isDynamic)) {
        stack.push(dep.code.specifier);
      }
    }
  }
  return seen;
}

Deno.test("main.ts imports the libSQL client, the S3 client, the simulator and the admin CLI only dynamically, and never fast-check", async () => {
  const info = await moduleGraph();
  const staticGraph = reachable(info, false);
  const fullGraph = reachable(info, true);
  assert.ok(staticGraph.has(new URL("src/http/app.ts", ROOT).href));
  assert.deepEqual(lazyIn(staticGraph), [], "statically imported");
  // The queue's setImmediate is the global, which loads Deno's Node timers
  // (and async hooks: 5-10 % of start CPU) on its first call, at the first
  // job instead of at start.
  assert.ok(staticGraph.has("node:sqlite"), "the graph lists no node: modules");
  assert.ok(!staticGraph.has("node:timers"), "node:timers is imported");
  // node:buffer (about 8 ms at start) and node:path (4-9 ms) are imported
  // by nothing serve needs before its first webhook or media file: the
  // signature check decodes its hex itself, the disk store loads node:path
  // on first use, and the database finds its directory itself.
  for (const builtin of ["node:buffer", "node:path"]) {
    assert.ok(!staticGraph.has(builtin), `${builtin} is imported`);
  }
  // Still in the graph through import() with a literal, so `deno compile` embeds them.
  for (const lazy of LAZY) {
    assert.ok(
      [...fullGraph].some(lazy.match),
      `${lazy.what} is not reachable through a dynamic import`,
    );
  }
  assert.deepEqual(
    [...fullGraph].filter((u) => u.includes("fast-check")),
    [],
  );
});

Deno.test("serve on a file database with media on disk evaluates none of them", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "bm-lazy-" });
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-L", "debug", "-A", MAIN, "serve"],
    cwd: fileURLToPath(ROOT),
    clearEnv: true,
    env: {
      PATH: Deno.env.get("PATH") ?? "",
      HOME: Deno.env.get("HOME") ?? "",
      ...(Deno.env.get("DENO_DIR")
        ? { DENO_DIR: Deno.env.get("DENO_DIR")! }
        : {}),
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: dataDir,
      DATABASE_URL: `file:${dataDir}/app.db`,
      MEDIA_STORE: `file:${dataDir}/media`,
      SECRET_KEY: "lazy-imports-secret-key-0123456789abcdef",
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      META_APP_SECRET: "lazy-imports-app-secret",
      LOG_LEVEL: "warn",
    },
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const log = new Response(child.stderr).text();
  try {
    await waitFor(async () => {
      const res = await fetch(`http://127.0.0.1:${port}/readyz`);
      await res.body?.cancel();
      return res.status === 200;
    }, { timeoutMs: 60_000, what: "serve to be ready" });
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(dataDir, { recursive: true });
  }
  const loaded = new Set(loadedModules(await log));
  // The log names the modules serve runs, so an empty answer below means something.
  assert.ok(loaded.has(MAIN), "the debug log lists no modules");
  assert.ok(loaded.has(new URL("src/http/app.ts", ROOT).href));
  assert.deepEqual(lazyIn(loaded), []);
});

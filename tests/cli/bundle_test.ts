// `deno task start` runs the single-file bundle `deno task build` writes,
// not main.ts: this builds it the way the build task does (into a temp
// directory) and runs it the way the start task does (its V8 flags), so a
// module that only works unbundled (evaluation order, import.meta, a file
// read beside the source) fails here rather than in production.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { freePort, waitFor } from "../_support/wait.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SECRET_KEY = "bundle-test-secret-key-0123456789abcdef";

interface Tasks {
  build: string;
  start: { command: string };
}

async function tasks(): Promise<Tasks> {
  return JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;
}

/** A task's `deno ...` command line as arguments of this Deno. */
function denoArgs(command: string): string[] {
  const [deno, ...args] = command.split(/\s+/);
  assert.equal(deno, "deno", command);
  return args;
}

/** The build task's arguments with the output moved to `out`. */
function buildArgs(command: string, out: string): string[] {
  const args = denoArgs(command);
  const at = args.indexOf("--output");
  assert.ok(at >= 0 && args[at + 1] === "dist/server.js", command);
  args[at + 1] = out;
  return args;
}

/** The start task's `deno run` flags, without its script and command. */
function runFlags(command: string): string[] {
  const args = denoArgs(command);
  assert.deepEqual(args.slice(-2), ["dist/server.js", "serve"], command);
  return args.slice(0, -2);
}

async function run(args: string[], env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);
  assert.ok(out.success, `${args.join(" ")}: ${text(out.stderr)}`);
  return text(out.stdout);
}

Deno.test("the bundle the build task writes migrates, runs admin commands and serves the API and its document", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-bundle-" });
  try {
    const { build, start } = await tasks();
    const bundle = `${dir}/server.js`;
    await run(buildArgs(build, bundle), {});
    const flags = runFlags(start.command);
    const port = freePort();
    const env = {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: `${dir}/data`,
      DATABASE_URL: `file:${dir}/data/app.db`,
      MEDIA_STORE: `file:${dir}/data/media`,
      SECRET_KEY,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      LOG_LEVEL: "warn",
    };
    const cli = (...args: string[]) => run([...flags, bundle, ...args], env);
    assert.match(await cli("migrate"), /Applied 0001_initial/);
    await cli("accounts", "create", "--name", "Bundled", "--slug", "bundled");
    const { key } = JSON.parse(
      await cli(
        "keys",
        "create",
        "--account",
        "bundled",
        "--scopes",
        "all",
        "--json",
      ),
    );
    const child = new Deno.Command(Deno.execPath(), {
      args: [...flags, bundle, "serve"],
      cwd: ROOT,
      env,
      stdin: "null",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const stderr = new Response(child.stderr).text();
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor(async () => {
        const res = await fetch(`${base}/readyz`);
        await res.body?.cancel();
        return res.status === 200;
      }, { timeoutMs: 60_000, what: "the bundled serve to be ready" });
      const account = await fetch(`${base}/api/v2/account`, {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(account.status, 200);
      assert.equal((await account.json()).data.slug, "bundled");
      // Validation runs the route schemas (zod plus the OpenAPI extension).
      const invalid = await fetch(`${base}/api/v2/messages`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${key}`,
          "content-type": "application/json",
        },
        body: JSON.stringify({ type: "text" }),
      });
      assert.equal(invalid.status, 400);
      assert.equal((await invalid.json()).error.code, "MISSING_REQUIRED_FIELD");
      const doc = await fetch(`${base}/api/v2/openapi.json`);
      assert.equal(doc.status, 200);
      const paths = Object.keys((await doc.json()).paths);
      assert.ok(paths.includes("/messages/batch"), paths.join(", "));
    } finally {
      child.kill("SIGTERM");
      const status = await child.status;
      const log = await stderr;
      assert.equal(status.code, 0, log);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// `deno task start` runs the bundle `deno task build` writes, not main.ts:
// this builds it the way the build task does (into a temp directory) and
// runs it the way the start task does (its V8 flags), so a module that only
// works unbundled (evaluation order, import.meta, a file read beside the
// source) fails here rather than in production. What main.ts imports
// dynamically stays in chunks of its own that serve on a file database
// never evaluates (tests/cli/lazy_imports_test.ts checks the source).
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { freePort, waitFor } from "../_support/wait.ts";
import { loadedModules } from "../_support/module_log.ts";
import { buildBundle, startTaskArgs } from "../../scripts/_bundle.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SECRET_KEY = "bundle-test-secret-key-0123456789abcdef";

/** Chunks of what main.ts imports dynamically (esbuild names them after the module). */
const LAZY_CHUNK =
  /\/(libsql_dialect|s3_blob_store|server|dev|admin|social_cli|templates_cli|simulator_cli)-\w+\.js$/;

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
    await buildBundle(`${dir}/server`);
    const bundle = `${dir}/server/main.js`;
    const chunks = [...Deno.readDirSync(`${dir}/server`)].map((e) => e.name);
    assert.ok(
      chunks.some((name) => name.startsWith("libsql_dialect-")),
      chunks.join(", "),
    );
    const start = await startTaskArgs(`${dir}/server`);
    assert.deepEqual(start.slice(-2), [bundle, "serve"]);
    const flags = start.slice(0, -2);
    const port = freePort();
    const env = {
      PORT: String(port),
      HOST: "127.0.0.1",
      DATA_DIR: `${dir}/data`,
      DATABASE_URL: `file:${dir}/data/app.db`,
      MEDIA_STORE: `file:${dir}/data/media`,
      SECRET_KEY,
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      META_APP_SECRET: "bundle-test-app-secret",
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
      args: ["run", "-L", "debug", ...flags.slice(1), bundle, "serve"],
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
      // Each route group's module is imported on its first request (after
      // the zod OpenAPI extension): one request per group, before the
      // document loads them all, answers from its handler.
      const uuid = crypto.randomUUID();
      for (
        const [path, status] of [
          ["/api/v2/channels", 200],
          ["/api/v2/contacts", 200],
          ["/api/v2/templates", 200],
          ["/api/v2/conversations", 200],
          [`/api/v2/media/${uuid}`, 404],
          ["/api/v2/webhooks", 200],
          ["/api/v2/events", 200],
          ["/api/v2/social/posts/123", 404],
          [`/api/v2/conversations/${uuid}/messages`, 404],
          ["/api/v1/webhook-subscriptions", 200],
          ["/api/v1/conversations/resolve", 400],
        ] as const
      ) {
        const res = await fetch(`${base}${path}`, {
          headers: { authorization: `Bearer ${key}` },
        });
        const body = await res.json();
        assert.equal(res.status, status, `${path}: ${JSON.stringify(body)}`);
        assert.doesNotMatch(
          String(body.error?.message),
          /^Cannot find route/,
          path,
        );
      }
      const doc = await fetch(`${base}/api/v2/openapi.json`);
      assert.equal(doc.status, 200);
      const paths = Object.keys((await doc.json()).paths);
      assert.ok(paths.includes("/messages/batch"), paths.join(", "));
    } finally {
      child.kill("SIGTERM");
      const status = await child.status;
      const log = await stderr;
      assert.equal(status.code, 0, log.slice(-4_000));
      const loaded = loadedModules(log);
      assert.ok(loaded.some((u) => u.endsWith("/server/main.js")));
      assert.deepEqual(loaded.filter((u) => LAZY_CHUNK.test(u)), []);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

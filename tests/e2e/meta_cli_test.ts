// The commands that talk to Meta, as a real process against the simulator
// (issue 28): `channels connect` reads the token and the PIN from standard
// input, `templates sync` exits non-zero and changes nothing when a page
// fails, naming Meta's code.
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { freePort, waitFor } from "../_support/wait.ts";
import {
  childEnv,
  cliJson,
  Proc,
  programCommand,
  runCli,
  TEST_SECRET_KEY,
  within,
} from "./_process.ts";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Runs the program with `input` on standard input. */
async function withStdin(
  args: string[],
  env: Record<string, string>,
  input: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { cmd, args: argv } = programCommand(args);
  const child = new Deno.Command(cmd, {
    args: argv,
    env: childEnv(env),
    clearEnv: true,
    cwd: REPO_ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(input));
  await writer.close();
  const out = await within(child.output(), 60_000, `main.ts ${args[0]}`);
  const text = new TextDecoder();
  return {
    code: out.code,
    stdout: text.decode(out.stdout),
    stderr: text.decode(out.stderr),
  };
}

async function sim(url: string, path: string, body: unknown) {
  const res = await fetch(`${url}/_sim${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, text);
}

Deno.test("channels connect reads the token and PIN from stdin; templates sync fails whole, naming Meta's code", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-e2e-meta-cli-" });
  const port = freePort();
  const simProc = new Proc(["simulator", "--port", String(port), "--json"], {});
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(async () => {
      const res = await fetch(`${url}/_sim/behaviour`).catch(() => null);
      await res?.body?.cancel();
      return res?.ok ?? false;
    }, { timeoutMs: 30_000, what: "the simulator" });
    await sim(url, "/wabas", { id: "3001", seed: "empty" });
    await sim(url, "/wabas/3001/templates", { generate: { count: 150 } });
    await sim(url, "/numbers", {
      phoneNumberId: "4001",
      displayPhoneNumber: "+5491122334477",
      wabaId: "3001",
      verifiedName: "Acme",
    });
    await sim(url, "/numbers/4001/health", { status: "PENDING" });
    const env = {
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/app.db`,
      SECRET_KEY: TEST_SECRET_KEY,
      LOG_LEVEL: "warn",
      META_GRAPH_URL: `${url}/v22.0`,
    };
    await cliJson(
      ["accounts", "create", "--name", "Acme", "--slug", "acme"],
      env,
    );
    const connected = await withStdin(
      [
        "channels",
        "connect",
        "--account",
        "acme",
        "--waba-id",
        "3001",
        "--access-token",
        "-",
        "--pin",
        "-",
        "--json",
      ],
      env,
      "EAAG-secret-token\n246810\n",
    );
    assert.equal(connected.code, 0, connected.stderr);
    const result = JSON.parse(connected.stdout);
    assert.deepEqual(
      result.channels.map((c: Record<string, unknown>) => [
        c.phoneNumber,
        c.displayName,
        c.registered,
      ]),
      [["+5491122334477", "Acme", "registered"]],
    );
    assert.equal(result.templates.templates, 150);
    assert.equal(result.templates.pages, 2);
    const missing = await withStdin(
      [
        "channels",
        "connect",
        "--account",
        "acme",
        "--waba-id",
        "3001",
        "--access-token",
        "-",
      ],
      env,
      "",
    );
    assert.equal(missing.code, 1);
    assert.match(
      missing.stderr,
      /Cannot read --access-token from standard input: it is empty/,
    );

    // Meta changes a template, then the second page of the sync fails.
    await sim(url, "/templates/generated_0001/status", { status: "PAUSED" });
    await sim(url, "/management/fail", {
      code: 2,
      path: "/message_templates",
      skip: 1,
    });
    const failed = await runCli(
      ["templates", "sync", "--account", "acme"],
      env,
    );
    assert.equal(failed.code, 1);
    assert.match(
      failed.stderr,
      /Cannot sync templates of WABA 3001 \(nothing changed\): Graph API rejected the read of "3001\/message_templates": .*\(Meta error 2\)/,
    );
    const list = await cliJson(["channels", "list", "--account", "acme"], env);
    assert.equal(list.length, 1);
    const again = await runCli([
      "templates",
      "sync",
      "--account",
      "acme",
      "--json",
    ], env);
    assert.equal(again.code, 0, again.stderr);
    const synced = JSON.parse(again.stdout);
    assert.equal(synced.synced[0].updated, 1, "the paused one, now");
  } finally {
    simProc.signal("SIGTERM");
    await within(simProc.status, 10_000, "the simulator to stop");
    await Deno.remove(dir, { recursive: true });
  }
});

// README: every command accepts --json. Each command of the usage text is run
// once as a real process with --json, and its standard output must parse as
// JSON; a command added to the usage without a row here fails the test.
import assert from "node:assert/strict";
import { freePort, waitFor } from "../_support/wait.ts";
import { Proc, runCli, TEST_SECRET_KEY, within } from "./_process.ts";
import { CREATE_CHANNEL, createTemplateArgs } from "./_cli_args.ts";

/** Commands that run a server until a signal and print no result. */
const SERVERS = new Set(["serve", "dev"]);

/** `accounts create`, `migrate`...: the commands `main.ts help` lists. */
async function usageCommands(): Promise<string[]> {
  const help = await runCli(["help"], {});
  assert.equal(help.code, 0, help.stderr);
  const commands = [...help.stdout.matchAll(/^ {2}([a-z]+)(?: ([a-z]+))?/gm)]
    .map(([, command, sub]) => sub ? `${command} ${sub}` : command!);
  assert.ok(commands.includes("migrate"), help.stdout);
  return [...new Set(commands)];
}

/** One run of each command, in an order where each finds what it needs. */
const ROWS: Array<[string, string[]]> = [
  ["migrate", ["migrate"]],
  ["accounts create", [
    "accounts",
    "create",
    "--name",
    "Acme",
    "--slug",
    "acme",
  ]],
  ["accounts list", ["accounts", "list"]],
  ["keys create", [
    "keys",
    "create",
    "--account",
    "acme",
    "--scopes",
    "all",
    "--name",
    "ci",
  ]],
  ["keys list", ["keys", "list", "--account", "acme"]],
  ["keys revoke", ["keys", "revoke", "--account", "acme", "--name", "ci"]],
  ["channels create", CREATE_CHANNEL],
  ["channels update", [
    "channels",
    "update",
    "--account",
    "acme",
    "--channel",
    "+5491122334455",
    "--status",
    "disconnected",
  ]],
  ["channels list", ["channels", "list", "--account", "acme"]],
  ["templates create", createTemplateArgs("es_AR", "approved")],
  ["templates update", [
    "templates",
    "update",
    "--account",
    "acme",
    "--name",
    "order_update",
    "--status",
    "paused",
  ]],
  ["agents create", ["agents", "create", "--account", "acme", "--name", "Ana"]],
  ["agents list", ["agents", "list", "--account", "acme"]],
  // (The usage's `agents login-link`, read up to its dash.)
  ["agents login", [
    "agents",
    "login-link",
    "--account",
    "acme",
    "--name",
    "Ana",
  ]],
  ["agents revoke", ["agents", "revoke", "--account", "acme", "--name", "Ana"]],
  ["social connect", [
    "social",
    "connect",
    "--account",
    "acme",
    "--network",
    "instagram",
    "--upstream-id",
    "17841400000000001",
    "--username",
    "acme.shop",
    "--access-token",
    "IGQ-token",
  ]],
];

/**
 * The simulator's banner: the line of `stdout` with its URLs. Every whole line
 * must be JSON (the others are its log lines, JSON already).
 */
function bannerOf(stdout: string): Record<string, unknown> | undefined {
  const lines = stdout.split("\n").slice(0, -1).map((l) => JSON.parse(l));
  return lines.find((l) => "graphUrl" in l);
}

Deno.test("every command of the usage prints JSON with --json", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-e2e-cli-json-" });
  const env = {
    DATA_DIR: dir,
    DATABASE_URL: `file:${dir}/app.db`,
    SECRET_KEY: TEST_SECRET_KEY,
    PUBLIC_BASE_URL: "https://inbox.example.com",
    LOG_LEVEL: "warn",
  };
  try {
    const covered = new Set(["simulator", ...ROWS.map(([name]) => name)]);
    const missing = (await usageCommands()).filter((c) =>
      !SERVERS.has(c) && !covered.has(c)
    );
    assert.deepEqual(missing, [], "commands of the usage without a row");

    const outputs: Record<string, unknown> = {};
    for (const [name, args] of ROWS) {
      const r = await runCli([...args, "--json"], env);
      assert.equal(r.code, 0, `${name}: ${r.stderr}`);
      assert.notEqual(r.json, undefined, `${name} printed:\n${r.stdout}`);
      outputs[name] = r.json;
    }
    assert.ok((outputs.migrate as { applied: string[] }).applied.length > 0);
    assert.match(
      (outputs["agents login"] as { url: string }).url,
      /^https:\/\/inbox\.example\.com\/panel\/login\?token=\w{43}$/,
    );
    const again = await runCli(["migrate", "--json"], env);
    assert.deepEqual(again.json, { applied: [] }, again.stdout);
    assert.equal((outputs["accounts list"] as unknown[]).length, 1);
    assert.equal(
      (outputs["channels update"] as { status: string }).status,
      "disconnected",
    );
    assert.equal(
      (outputs["templates update"] as { status: string }).status,
      "paused",
    );
    assert.deepEqual(outputs["agents revoke"], {
      id: (outputs["agents create"] as { id: string }).id,
      revoked: true,
    });

    // The simulator runs until a signal: its banner is a JSON line among its logs.
    const port = freePort();
    const sim = new Proc(["simulator", "--port", String(port), "--json"], {});
    try {
      const banner = await waitFor(() => bannerOf(sim.stdout), {
        timeoutMs: 30_000,
        what: "the simulator's banner",
      });
      assert.deepEqual(banner, {
        graphUrl: `http://127.0.0.1:${port}/v22.0`,
        url: `http://127.0.0.1:${port}`,
        callbackUrl: null,
      });
    } finally {
      sim.signal("SIGTERM");
      await within(sim.status, 10_000, "the simulator to stop");
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

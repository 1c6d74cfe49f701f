// docs/cli.md: every command accepts --json. Each command of the usage text is run
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

/** The number the simulator has in WABA 1022 for `channels connect`. */
const SIM_NUMBER = {
  phoneNumberId: "1066",
  displayPhoneNumber: "+5491122334466",
  wabaId: "1022",
};

/**
 * One run of each command, in an order where each finds what it needs (the
 * exit code when it is not 0: doctor finds what blocks this setup).
 */
const ROWS: Array<[string, string[], number?]> = [
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
  ["channels connect", [
    "channels",
    "connect",
    "--account",
    "acme",
    "--waba-id",
    SIM_NUMBER.wabaId,
    "--phone-number-id",
    SIM_NUMBER.phoneNumberId,
    "--access-token",
    "EAAG-test-token",
  ]],
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
  ["templates sync", ["templates", "sync", "--account", "acme"]],
  // No META_APP_SECRET here: receiving is blocked.
  ["doctor", ["doctor", "--account", "acme"], 1],
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

/** Starts `main.ts simulator` and waits for its banner. */
async function startSimulatorProc(): Promise<{ proc: Proc; url: string }> {
  const port = freePort();
  const proc = new Proc(["simulator", "--port", String(port), "--json"], {});
  const banner = await waitFor(() => bannerOf(proc.stdout), {
    timeoutMs: 30_000,
    what: "the simulator's banner",
  });
  return { proc, url: banner.url as string };
}

Deno.test("every command of the usage prints JSON with --json", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-e2e-cli-json-" });
  const meta = await startSimulatorProc();
  const res = await fetch(`${meta.url}/_sim/numbers`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(SIM_NUMBER),
  });
  assert.equal(res.status, 200, await res.text());
  const env = {
    DATA_DIR: dir,
    DATABASE_URL: `file:${dir}/app.db`,
    SECRET_KEY: TEST_SECRET_KEY,
    PUBLIC_BASE_URL: "https://inbox.example.com",
    LOG_LEVEL: "warn",
    META_GRAPH_URL: `${meta.url}/v22.0`,
  };
  try {
    const covered = new Set(["simulator", ...ROWS.map(([name]) => name)]);
    const missing = (await usageCommands()).filter((c) =>
      !SERVERS.has(c) && !covered.has(c)
    );
    assert.deepEqual(missing, [], "commands of the usage without a row");

    const outputs: Record<string, unknown> = {};
    for (const [name, args, code = 0] of ROWS) {
      const r = await runCli([...args, "--json"], env);
      assert.equal(r.code, code, `${name}: ${r.stderr}`);
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
    const connected = outputs["channels connect"] as {
      channels: { upstreamPhoneNumberId: string; created: boolean }[];
      templates: { templates: number };
    };
    assert.deepEqual(
      connected.channels.map((c) => [c.upstreamPhoneNumberId, c.created]),
      [["1066", true]],
    );
    assert.ok(connected.templates.templates > 25);
    const synced = outputs["templates sync"] as {
      synced: { wabaId: string }[];
      failed: unknown[];
    };
    assert.deepEqual(synced.synced.map((s) => s.wabaId), ["1022"]);
    assert.deepEqual(synced.failed, []);
    const doctor = outputs.doctor as {
      checks: { name: string; ok: boolean; fix: string | null }[];
    };
    const failed = doctor.checks.filter((c) => !c.ok).map((c) => c.name);
    // No META_APP_SECRET here (PUBLIC_BASE_URL is set, for the login link).
    assert.ok(failed.includes("META_APP_SECRET"), JSON.stringify(doctor));
    assert.ok(!failed.includes("PUBLIC_BASE_URL"), JSON.stringify(doctor));
    assert.ok(doctor.checks.every((c) => c.ok || c.fix), "a fix for each");
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
    meta.proc.signal("SIGTERM");
    await within(meta.proc.status, 10_000, "the simulator to stop");
    await Deno.remove(dir, { recursive: true });
  }
});

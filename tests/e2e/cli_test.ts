// The admin CLI run as a real process against a temp SQLite file.
import assert from "node:assert/strict";
import {
  api,
  cliJson,
  runCli,
  startServer,
  TEST_SECRET_KEY,
} from "./_process.ts";
import { COMPONENTS, CREATE_CHANNEL, createTemplateArgs } from "./_cli_args.ts";

async function withDb(
  fn: (env: Record<string, string>, dir: string) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "bm-e2e-cli-" });
  try {
    await fn({
      DATA_DIR: dir,
      DATABASE_URL: `file:${dir}/app.db`,
      SECRET_KEY: TEST_SECRET_KEY,
      LOG_LEVEL: "warn",
    }, dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** No stack trace or uncaught-error banner reaches the user. */
function assertCleanError(r: { stderr: string; stdout: string }): void {
  const all = r.stdout + r.stderr;
  assert.doesNotMatch(all, /^\s+at /m, `stack trace printed:\n${all}`);
  assert.doesNotMatch(all, /Uncaught/, `uncaught error printed:\n${all}`);
}

interface Failure {
  args: string[];
  code?: number;
  message: RegExp;
}

/** Each command fails (with `code` when given) and says `message`, without a stack trace. */
async function assertFailures(
  cases: Failure[],
  env: Record<string, string>,
): Promise<void> {
  for (const c of cases) {
    const r = await runCli(c.args, env);
    const label = `main.ts ${c.args.join(" ")}`;
    assert.notEqual(r.code, 0, `${label} succeeded`);
    if (c.code !== undefined) assert.equal(r.code, c.code, label);
    assert.match(r.stderr, c.message, `${label}:\n${r.stderr}`);
    assertCleanError(r);
  }
}

Deno.test("migrate applies the migrations once, then reports up to date", async () => {
  await withDb(async (env) => {
    const first = await runCli(["migrate"], env);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /Applied /);
    const second = await runCli(["migrate"], env);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /Database is up to date/);
  });
});

Deno.test("admin commands create an account, key, channel, template and agent that the server honours", async () => {
  await withDb(async (env, dir) => {
    const account = await cliJson([
      "accounts",
      "create",
      "--name",
      "Acme",
      "--slug",
      "acme",
      "--country",
      "AR",
    ], env);
    assert.equal(account.slug, "acme");

    const key = await cliJson(
      ["keys", "create", "--account", "acme", "--scopes", "all"],
      env,
    );
    assert.deepEqual(Object.keys(key).sort(), ["id", "key", "scopes"]);
    assert.match(key.key, /^bmk_/);
    assert.ok(key.scopes.includes("messages:write"));
    const listed = await cliJson(["keys", "list", "--account", "acme"], env);
    assert.ok(listed.some((k: { id: string }) => k.id === key.id));
    assert.ok(!JSON.stringify(listed).includes(key.key), "key shown again");

    const channel = await cliJson([
      "channels",
      "create",
      "--account",
      "acme",
      "--phone",
      "+5491122334455",
      "--display-name",
      "Acme line",
      "--upstream-phone-number-id",
      "106540352242922",
      "--waba-id",
      "102290129340398",
      "--access-token",
      "EAAG-test-token",
    ], env);
    assert.equal(channel.status, "connected");
    assert.ok(!JSON.stringify(channel).includes("EAAG-test-token"));
    const updated = await cliJson([
      "channels",
      "update",
      "--id",
      channel.id,
      "--display-name",
      "Acme support",
      "--status",
      "disconnected",
    ], env);
    assert.equal(updated.displayName, "Acme support");
    assert.equal(updated.status, "disconnected");

    const template = await cliJson([
      "templates",
      "create",
      "--account",
      "acme",
      "--name",
      "order_update",
      "--language",
      "es_AR",
      "--category",
      "UTILITY",
      "--status",
      "pending",
      "--components",
      COMPONENTS,
    ], env);
    assert.equal(template.status, "pending");
    const approved = await cliJson(
      ["templates", "update", "--id", template.id, "--status", "approved"],
      env,
    );
    assert.equal(approved.status, "approved");

    const agent = await cliJson([
      "agents",
      "create",
      "--account",
      "acme",
      "--name",
      "Ana",
      "--visibility",
      "assigned",
    ], env);
    assert.equal(agent.visibility, "assigned");
    assert.ok(typeof agent.token === "string" && agent.token.length >= 20);

    await using server = await startServer({ env, dataDir: dir });
    const me = await api(server.baseUrl, key.key, "GET", "/account");
    assert.equal(me.status, 200, JSON.stringify(me.body));
    assert.equal(me.body.data.id, account.id);
    const channels = await api(server.baseUrl, key.key, "GET", "/channels");
    assert.deepEqual(
      channels.body.data.map((c: Record<string, string>) => [
        c.id,
        c.status,
      ]),
      [[channel.id, "disconnected"]],
    );
    const templates = await api(server.baseUrl, key.key, "GET", "/templates");
    assert.deepEqual(
      templates.body.data.map((t: Record<string, string>) => [
        t.name,
        t.status,
      ]),
      [["order_update", "approved"]],
    );
    const asAgent = await api(
      server.baseUrl,
      agent.token,
      "GET",
      "/conversations",
    );
    assert.equal(asAgent.status, 200, JSON.stringify(asAgent.body));

    const revoked = await cliJson(["keys", "revoke", "--id", key.id], env);
    assert.deepEqual(revoked, { id: key.id, revoked: true });
    const after = await api(server.baseUrl, key.key, "GET", "/account");
    assert.equal(after.status, 401);
    assert.equal(after.body.error.code, "UNAUTHORIZED");

    // The server process has no credential cache: the CLI's revoke is seen at once.
    const agents = await cliJson(["agents", "list", "--account", "acme"], env);
    assert.equal(agents.length, 1);
    assert.equal(agents[0].id, agent.id);
    assert.equal(typeof agents[0].lastUsedAt, "string", "use was recorded");
    assert.deepEqual(
      await cliJson(["agents", "revoke", "--id", agent.id], env),
      { id: agent.id, revoked: true },
    );
    const gone = await api(
      server.baseUrl,
      agent.token,
      "GET",
      "/conversations",
    );
    assert.equal(gone.status, 401);
  });
});

Deno.test("bad CLI arguments exit non-zero with a clear message and no stack trace", async () => {
  await withDb(async (env) => {
    await cliJson(
      ["accounts", "create", "--name", "Acme", "--slug", "acme"],
      env,
    );
    const cases: Failure[] = [
      {
        args: ["frobnicate"],
        code: 2,
        message: /Unknown command "frobnicate"/,
      },
      {
        args: ["accounts", "create", "--name", "Acme"],
        code: 2,
        message: /Missing required option --slug/,
      },
      {
        args: ["keys", "create", "--account", "acme", "--scopes", "bogus"],
        code: 2,
        message: /"bogus" is not one of/,
      },
      {
        args: ["keys", "create", "--account", "nope", "--scopes", "all"],
        message: /Cannot find account "nope"/,
      },
      {
        args: ["migrate", "--colour", "red"],
        message: /Unknown option '--colour'/,
      },
      {
        args: ["keys", "list", "--account", "acme", "--colour", "red"],
        message: /Unknown option '--colour'/,
      },
      {
        args: [
          "keys",
          "revoke",
          "--id",
          "01a1fb26-cea4-7d85-bf7a-734b3e9ecc94",
        ],
        message: /01a1fb26-cea4-7d85-bf7a-734b3e9ecc94/,
      },
      {
        args: [
          "templates",
          "create",
          "--account",
          "acme",
          "--name",
          "x",
          "--language",
          "es",
          "--category",
          "UTILITY",
          "--status",
          "approved",
          "--components",
          "{not json",
        ],
        code: 2,
        message: /--components must be a JSON array/,
      },
      {
        // A command line cannot hold a NUL, but JSON in it can (\u0000).
        args: [
          ...createTemplateArgs("es", "approved").slice(0, -1),
          '[{"type":"BODY","text":"Hola\\u0000 {{1}}"}]',
        ],
        code: 1,
        message:
          /components\[0\]\.text must not contain a NUL character \(U\+0000\)/,
      },
      {
        args: ["channels", "update", "--id", "x", "--status", "paused"],
        code: 2,
        message: /--status must be connected or disconnected/,
      },
    ];
    await assertFailures(cases, env);
  });
});

Deno.test("without SECRET_KEY or DATA_DIR/secret.key only commands that store a secret fail, naming the variable", async () => {
  const dir = await Deno.makeTempDir({ prefix: "bm-e2e-cli-" });
  try {
    const env = { DATA_DIR: dir, LOG_LEVEL: "warn" };
    for (
      const args of [
        ["migrate"],
        ["accounts", "create", "--name", "Acme", "--slug", "acme"],
        ["keys", "create", "--account", "acme", "--scopes", "all"],
        ["accounts", "list"],
      ]
    ) {
      const ok = await runCli(args, env);
      assert.equal(ok.code, 0, `${args.join(" ")}\n${ok.stderr}`);
    }
    const r = await runCli(CREATE_CHANNEL, env);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /SECRET_KEY is not set/);
    assertCleanError(r);
    const channels = await cliJson(
      ["channels", "list", "--account", "acme"],
      env,
    );
    assert.deepEqual(channels, [], "a channel was stored without its token");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("keys, channels and templates can be named instead of given by id", async () => {
  await withDb(async (env) => {
    await cliJson(
      ["accounts", "create", "--name", "Acme", "--slug", "acme"],
      env,
    );
    const key = (name: string) =>
      cliJson([
        "keys",
        "create",
        "--account",
        "acme",
        "--scopes",
        "all",
        "--name",
        name,
      ], env);
    const [a, b, twin] = [await key("a"), await key("b"), await key("b")];
    const revoked = await cliJson(
      ["keys", "revoke", "--account", "acme", "--name", "a"],
      env,
    );
    assert.deepEqual(revoked, { id: a.id, revoked: true });
    const states = await cliJson(["keys", "list", "--account", "acme"], env);
    assert.deepEqual(
      states.map((k: { id: string; revokedAt: string | null }) => [
        k.id,
        k.revokedAt !== null,
      ]),
      [[a.id, true], [b.id, false], [twin.id, false]],
    );
    const cases: Failure[] = [
      {
        args: ["keys", "revoke", "--account", "acme", "--name", "a"],
        message: /Cannot find an active key named "a" in account "acme"/,
      },
      {
        args: ["keys", "revoke", "--account", "acme", "--name", "b"],
        message:
          /Cannot pick an active key named "b" in account "acme": 2 match; give --id/,
      },
      {
        args: ["keys", "revoke", "--name", "b"],
        message: /Give --id, or --account and --name/,
      },
      {
        args: [
          "channels",
          "update",
          "--account",
          "acme",
          "--channel",
          "+5491100000000",
          "--status",
          "disconnected",
        ],
        message: /Cannot find a channel with phone number "\+5491100000000"/,
      },
      {
        args: [
          "templates",
          "update",
          "--account",
          "acme",
          "--name",
          "nope",
          "--status",
          "paused",
        ],
        message: /Cannot find template "nope"/,
      },
    ];
    await assertFailures(cases, env);
    const channel = await cliJson(CREATE_CHANNEL, env);
    const updated = await cliJson([
      "channels",
      "update",
      "--account",
      "acme",
      "--channel",
      "+54 9 11 2233-4455",
      "--status",
      "disconnected",
    ], env);
    assert.equal(updated.id, channel.id);
    assert.equal(updated.status, "disconnected");
    for (const language of ["es_AR", "en_US"]) {
      await cliJson(createTemplateArgs(language, "approved"), env);
    }
    const paused = await cliJson([
      "templates",
      "update",
      "--account",
      "acme",
      "--name",
      "order_update",
      "--language",
      "es_AR",
      "--status",
      "paused",
    ], env);
    assert.deepEqual([paused.language, paused.status], ["es_AR", "paused"]);
  });
});

Deno.test("serve without META_APP_SECRET exits non-zero and names the variable", async () => {
  await withDb(async (env) => {
    const r = await runCli(["serve"], {
      ...env,
      PORT: "0",
      PUBLIC_BASE_URL: "https://api.example.com",
    });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /set META_APP_SECRET/);
    assertCleanError(r);
  });
});

Deno.test("serve without PUBLIC_BASE_URL exits non-zero and names the variable", async () => {
  await withDb(async (env) => {
    const r = await runCli(["serve"], { ...env, PORT: "0" });
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /PUBLIC_BASE_URL/);
    assert.match(r.stderr, /never from a request's Host header/);
    assertCleanError(r);
  });
});

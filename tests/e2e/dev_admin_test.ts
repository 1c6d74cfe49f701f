// `dev` on a fresh data directory as a newcomer meets it: loopback only, a
// Meta app secret of its own, and docs/cli.md's Administration block run as
// written against its DATA_DIR with SECRET_KEY unset.
import assert from "node:assert/strict";
import { loadConfig } from "../../src/config.ts";
import { createContainer } from "../../src/container.ts";
import { hmacSha256Hex } from "../../src/crypto.ts";
import { channelAccessToken } from "../../src/domain/channels/channel_service.ts";
import { waitFor } from "../_support/wait.ts";
import { api, runCli, type ServerProcess, startServer } from "./_process.ts";

const CLI_PAGE = new URL("../../docs/cli.md", import.meta.url);
const PROGRAM = ["deno", "run", "-A", "main.ts"];

/** The ```sh blocks of docs/cli.md's "## Administration" section, one command per entry. */
async function documentedAdminCommands(): Promise<string[][]> {
  const text = await Deno.readTextFile(CLI_PAGE);
  const section = text.split(/^## /m).find((s) =>
    s.startsWith("Administration\n")
  );
  assert.ok(section, "docs/cli.md has no Administration section");
  const blocks = [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)];
  assert.ok(blocks.length > 0, "docs/cli.md's Administration has no sh block");
  return blocks.flatMap((b) =>
    b[1]!.replace(/\\\n/g, " ").split("\n").filter((l) => l.trim())
      .map(shellWords)
  );
}

/** Splits one plain command line like sh: words, '...' and "..." quoting; anything fancier is refused. */
function shellWords(line: string): string[] {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const ch = line[i]!;
    if (ch === " " || ch === "\t") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (ch === "'" || ch === '"') {
      const close = line.indexOf(ch, i + 1);
      assert.ok(close > i, `unbalanced ${ch} in: ${line}`);
      const quoted = line.slice(i + 1, close);
      assert.ok(
        ch === "'" || !/[$`\\]/.test(quoted),
        `expansion in "..." in: ${line}`,
      );
      word = (word ?? "") + quoted;
      i = close;
    } else {
      assert.ok(
        !/[$`\\<>|;&(){}*?#~]/.test(ch),
        `docs/cli.md command uses shell syntax "${ch}" (placeholders cannot run as written): ${line}`,
      );
      word = (word ?? "") + ch;
    }
  }
  if (word !== undefined) words.push(word);
  return words;
}

/** An address of this machine that is not 127.0.0.1, to knock on from outside loopback. */
function otherLocalAddress(): string | undefined {
  const external = Deno.networkInterfaces().find((i) =>
    i.family === "IPv4" && !i.address.startsWith("127.")
  );
  if (external) return external.address;
  return Deno.build.os === "linux" ? "127.0.0.2" : undefined;
}

async function connects(hostname: string, port: number): Promise<boolean> {
  try {
    (await Deno.connect({ hostname, port })).close();
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.ConnectionRefused) return false;
    throw err;
  }
}

async function banner(server: ServerProcess): Promise<string> {
  await waitFor(() => server.proc.stdout.includes("curl -H"), {
    timeoutMs: 30_000,
    what: "the dev banner",
  }).catch((err) => {
    throw new Error(`${err.message}\n${server.output()}`);
  });
  return server.proc.stdout;
}

async function postMetaWebhook(
  server: ServerProcess,
  secret: string,
): Promise<number> {
  const raw = JSON.stringify({
    object: "whatsapp_business_account",
    entry: [],
  });
  const res = await fetch(`${server.baseUrl}/meta/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-hub-signature-256": `sha256=${await hmacSha256Hex(secret, raw)}`,
    },
    body: raw,
  });
  await res.body?.cancel();
  return res.status;
}

Deno.test("dev on a fresh data directory: loopback only, its own Meta app secret, and docs/cli.md's admin block as written", async (t) => {
  await using server = await startServer({
    command: "dev",
    defaultHost: true,
    env: { LOG_LEVEL: "warn" },
  });
  const out = await banner(server);

  const probe = otherLocalAddress();
  await t.step({
    name: "without HOST it listens on 127.0.0.1 only, and the banner says so",
    ignore: probe === undefined,
    fn: async () => {
      assert.match(
        out,
        new RegExp(
          `Listening on: 127\\.0\\.0\\.1:${server.port} \\(this machine only`,
        ),
      );
      // The probe address does reach listeners on all interfaces...
      const open = Deno.listen({ hostname: "0.0.0.0", port: 0 });
      try {
        assert.ok(await connects(probe!, open.addr.port), probe);
      } finally {
        open.close();
      }
      // ...but not dev's.
      assert.equal(await connects(probe!, server.port), false, probe);
      assert.equal(await connects("127.0.0.1", server.port), true);
    },
  });

  await t.step(
    "the Meta app secret is generated for this data directory and verifies /meta/webhook",
    async () => {
      const file = `${server.dataDir}/meta-app-secret`;
      const secret = (await Deno.readTextFile(file)).trim();
      assert.ok(secret.length >= 32, secret);
      assert.equal((await Deno.stat(file)).mode! & 0o077, 0, "readable by all");
      assert.ok(out.includes(`App secret:   ${file}`), out);
      assert.ok(!out.includes(secret), "the banner prints the secret itself");
      assert.equal(await postMetaWebhook(server, secret), 200);
      assert.equal(await postMetaWebhook(server, "dev-app-secret"), 401);
    },
  );

  await t.step(
    "every command of docs/cli.md's Administration block exits 0 without SECRET_KEY",
    async () => {
      const env = { DATA_DIR: server.dataDir };
      const outputs = new Map<string, string>();
      const commands = await documentedAdminCommands();
      assert.ok(commands.length >= 10, `${commands.length} commands`);
      for (const words of commands) {
        const line = words.join(" ");
        assert.deepEqual(words.slice(0, 4), PROGRAM, line);
        const r = await runCli(words.slice(4), env);
        assert.equal(r.code, 0, `${line}\n${r.stdout}\n${r.stderr}`);
        outputs.set(line, r.stdout);
      }
      const printed = (needle: string, pattern: RegExp): string => {
        const line = [...outputs.keys()].find((l) => l.includes(needle));
        const match = pattern.exec(outputs.get(line ?? "") ?? "");
        assert.ok(match, `no ${pattern} printed by "${needle}"`);
        return match[0];
      };
      const key = printed("--name backend", /bmk_\w+/);
      const oldKey = printed("--name old-report", /bmk_\w+/);
      const agentToken = printed("--name Ana", /bmu_\w+/);
      const revokedAgent = printed("--name Temp", /bmu_\w+/);
      // The login link names the dev server of this data directory.
      const link = printed(
        "login-link",
        /http:\/\/localhost:\d+\/panel\/login\?token=\w{43}/,
      );
      const page = await fetch(
        link.replace(/^http:\/\/localhost:\d+/, server.baseUrl),
      );
      assert.match(await page.text(), />Sign in</);
      const call = (token: string, path: string) =>
        api(server.baseUrl, token, "GET", path);

      // Keys: the one kept works with its rate limit, the revoked one does not.
      const account = await call(key, "/account");
      assert.equal(account.status, 200, JSON.stringify(account.body));
      assert.equal(account.body.data.slug, "acme");
      assert.equal(account.headers.get("x-ratelimit-limit"), "120");
      assert.equal((await call(oldKey, "/account")).status, 401);
      assert.match(printed("keys list", /[\s\S]+/), /backend[\s\S]*old-report/);

      // The channel, updated by phone number; its token sealed with dev's key.
      const channels = await call(key, "/channels");
      assert.deepEqual(
        channels.body.data.map((c: Record<string, string>) => [
          c.phoneNumber,
          c.status,
        ]),
        [["+5491122334455", "disconnected"]],
      );
      await using c = createContainer(loadConfig({
        DATA_DIR: server.dataDir,
        SECRET_KEY: (await Deno.readTextFile(`${server.dataDir}/secret.key`))
          .trim(),
        LOG_LEVEL: "silent",
      }));
      assert.equal(
        await channelAccessToken(c, channels.body.data[0].id),
        "EAAGplaceholder",
      );

      // The template, updated by name.
      const templates = await call(key, "/templates");
      assert.deepEqual(
        templates.body.data.map((x: Record<string, string>) => [
          x.name,
          x.language,
          x.status,
        ]),
        [["order_update", "es_AR", "paused"]],
      );

      // The agent's token works where user tokens may go.
      const resolved = await fetch(
        `${server.baseUrl}/api/v1/conversations/resolve?phone=%2B5491199990000`,
        { headers: { authorization: `Bearer ${agentToken}` } },
      );
      assert.equal(resolved.status, 200);
      assert.deepEqual(await resolved.json(), {
        data: { conversationId: null, alternatives: [] },
      });
      assert.equal((await call(agentToken, "/channels")).status, 200);
      assert.equal((await call(agentToken, "/webhooks")).status, 403);
      // The agent revoked by name is refused; the list shows both.
      assert.equal((await call(revokedAgent, "/channels")).status, 401);
      const agents = printed("agents list", /[\s\S]+/);
      assert.match(agents, /Ana\s+assigned\s+active/);
      assert.match(agents, /Temp\s+all\s+active/, "listed before the revoke");
    },
  );
});

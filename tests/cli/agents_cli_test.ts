// `agents create|list|revoke` in-process against the app the harness serves:
// a revoked user token is refused on its very next request.
import assert from "node:assert/strict";
import { agentsCommand } from "../../src/cli/admin.ts";
import { UsageError } from "../../src/cli/args.ts";
import { AppError } from "../../src/errors.ts";
import { toDbTime } from "../../src/db/time.ts";
import type { ManualClock } from "../../src/clock.ts";
import { engineTest, type Harness } from "../_harness.ts";
import { runCommand } from "../_support/cli_output.ts";

const CONVERSATIONS = "/api/v2/conversations";

function run(h: Harness, args: string[]): Promise<string> {
  return runCommand(agentsCommand, h.container, args);
}

async function createAgent(h: Harness, name: string) {
  return JSON.parse(
    await run(h, [
      "create",
      "--account",
      h.tenant.account.slug,
      "--name",
      name,
      "--json",
    ]),
  ) as { id: string; token: string };
}

engineTest(
  "agents list shows state and lastUsedAt, and agents revoke refuses the token's next request",
  async (h) => {
    const clock = h.clock as ManualClock;
    const ana = await createAgent(h, "Ana");
    clock.advance(1_000); // list order is creation order
    const bruno = await createAgent(h, "Bruno");
    clock.advance(1_000);
    for (const agent of [ana, bruno]) {
      const res = await h.request("GET", CONVERSATIONS, { key: agent.token });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }

    const slug = h.tenant.account.slug;
    const listed = JSON.parse(
      await run(h, ["list", "--account", slug, "--json"]),
    );
    const used = toDbTime(h.clock.now());
    assert.deepEqual(
      listed.map((a: Record<string, unknown>) => [
        a.id,
        a.name,
        a.lastUsedAt,
        a.revokedAt,
      ]),
      [[ana.id, "Ana", used, null], [bruno.id, "Bruno", used, null]],
    );
    const json = JSON.stringify(listed);
    assert.ok(!json.includes(ana.token.slice(4)), "token shown again");
    assert.ok(!/hash/i.test(json), "token hash shown");
    const text = await run(h, ["list", "--account", slug]);
    assert.match(
      text,
      new RegExp(`${ana.id}  Ana  all  active  last used ${used}`),
    );

    const revoked = JSON.parse(
      await run(h, ["revoke", "--id", ana.id, "--json"]),
    );
    assert.deepEqual(revoked, { id: ana.id, revoked: true });
    const refused = await h.request("GET", CONVERSATIONS, { key: ana.token });
    assert.equal(refused.status, 401);
    assert.equal(refused.body.error.code, "UNAUTHORIZED");
    assert.equal(
      refused.headers.get("www-authenticate"),
      'Bearer error="invalid_token"',
    );
    const other = await h.request("GET", CONVERSATIONS, { key: bruno.token });
    assert.equal(other.status, 200, "the other agent is untouched");

    const after = JSON.parse(
      await run(h, ["list", "--account", slug, "--json"]),
    );
    assert.equal(after[0].revokedAt, toDbTime(h.clock.now()));
    assert.equal(after[1].revokedAt, null);
    assert.match(
      await run(h, ["list", "--account", slug]),
      /Ana {2}all {2}revoked/,
    );
    await assert.rejects(
      run(h, ["revoke", "--id", ana.id]),
      (err) => err instanceof AppError && err.code === "NOT_FOUND",
    );
  },
);

engineTest(
  "agents rejects an unknown subcommand and a missing --account",
  async (h) => {
    await assert.rejects(run(h, ["delete"]), UsageError);
    await assert.rejects(
      run(h, ["list"]),
      (err) => err instanceof UsageError && /--account/.test(err.message),
    );
  },
);

engineTest(
  "agents login-link prints a one-time panel URL on PUBLIC_BASE_URL, valid 10 minutes",
  async (h) => {
    const ana = await createAgent(h, "Ana");
    const slug = h.tenant.account.slug;
    const json = JSON.parse(
      await run(h, [
        "login-link",
        "--account",
        slug,
        "--name",
        "Ana",
        "--json",
      ]),
    );
    assert.deepEqual(Object.keys(json).sort(), ["expiresAt", "url"]);
    const url = new URL(json.url);
    assert.equal(url.origin, "http://localhost");
    assert.equal(url.pathname, "/panel/login");
    assert.match(url.searchParams.get("token")!, /^[0-9A-Za-z]{43}$/);
    assert.equal(
      json.expiresAt,
      toDbTime(new Date(h.clock.now().getTime() + 600_000)),
    );
    const text = await run(h, ["login-link", "--id", ana.id]);
    assert.match(text, /^http:\/\/localhost\/panel\/login\?token=\w{43}\n/);
    // Only the hash is stored.
    const rows = await h.container.db.selectFrom("agent_login_links")
      .select("token_hash").execute();
    assert.equal(rows.length, 2);
    assert.ok(rows.every((r) => !json.url.includes(r.token_hash)));
    await run(h, ["revoke", "--account", slug, "--name", "Ana"]);
    await assert.rejects(
      () => run(h, ["login-link", "--id", ana.id]),
      (err) => err instanceof AppError && err.code === "NOT_FOUND",
    );
  },
);

// `social connect`: a social account gets its own channelId, its token is
// sealed at rest, and a first refresh is queued with it.
import assert from "node:assert/strict";
import { socialCommand } from "../../src/cli/social_cli.ts";
import { UsageError } from "../../src/cli/args.ts";
import { AppError } from "../../src/errors.ts";
import { engineTest, type Harness } from "../_harness.ts";
import { runCommand } from "../_support/cli_output.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function connect(h: Harness, extra: string[] = []): Promise<string> {
  return runCommand(socialCommand, h.container, [
    "connect",
    "--account",
    h.tenant.account.slug,
    "--network",
    "instagram",
    "--upstream-id",
    "17841400000099",
    "--username",
    "shop",
    "--access-token",
    "IGQ-secret-token",
    "--name",
    "The Shop",
    ...extra,
  ]);
}

engineTest(
  "social connect stores a sealed token and queues a first refresh",
  async (h) => {
    const out = JSON.parse(await connect(h, ["--json"]));
    assert.match(out.channelId, UUID);
    assert.equal(out.network, "instagram");
    assert.equal(out.username, "shop");
    assert.equal(out.name, "The Shop");
    assert.equal(JSON.stringify(out).includes("IGQ-secret-token"), false);

    const row = await h.container.db.selectFrom("social_accounts").selectAll()
      .where("id", "=", out.channelId).executeTakeFirstOrThrow();
    assert.equal(row.account_id, h.tenant.account.id);
    assert.equal(row.access_token_enc.includes("IGQ-secret-token"), false);
    assert.equal(
      await h.container.secrets.open(row.access_token_enc),
      "IGQ-secret-token",
    );
    const jobs = await h.container.db.selectFrom("jobs").select("payload")
      .where("kind", "=", "social.refresh").execute();
    assert.deepEqual(jobs.map((j) => JSON.parse(j.payload)), [{
      socialAccountId: out.channelId,
    }]);

    await assert.rejects(connect(h), AppError, "connected twice");
    await assert.rejects(
      runCommand(socialCommand, h.container, [
        "connect",
        "--account",
        h.tenant.account.slug,
        "--network",
        "tiktok",
        "--upstream-id",
        "1",
        "--username",
        "u",
        "--access-token",
        "t",
      ]),
      UsageError,
    );
  },
);

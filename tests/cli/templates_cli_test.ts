import assert from "node:assert/strict";
import { templatesCommand } from "../../src/cli/templates_cli.ts";
import { UsageError } from "../../src/cli/args.ts";
import { AppError } from "../../src/errors.ts";
import { engineTest, type Harness } from "../_harness.ts";
import { runCommand } from "../_support/cli_output.ts";

/** Runs a command and returns what it printed. */
function run(h: Harness, args: string[]): Promise<string> {
  return runCommand(templatesCommand, h.container, args);
}

const COMPONENTS = '[{"type":"BODY","text":"Hola {{1}}"}]';

engineTest(
  "templates create and update write the rows and print JSON",
  async (h) => {
    const out = await run(h, [
      "create",
      "--account",
      h.tenant.account.slug,
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
      "--channel",
      h.tenant.channel.id,
      "--meta-template-id",
      "778899",
      "--json",
    ]);
    const created = JSON.parse(out);
    const row = await h.container.db.selectFrom("templates").selectAll()
      .where("id", "=", created.id).executeTakeFirstOrThrow();
    assert.deepEqual(
      {
        account: row.account_id,
        channel: row.channel_id,
        meta: row.meta_template_id,
        name: row.name,
        language: row.language,
        category: row.category,
        status: row.status,
        components: JSON.parse(row.components),
      },
      {
        account: h.tenant.account.id,
        channel: h.tenant.channel.id,
        meta: "778899",
        name: "order_update",
        language: "es_AR",
        category: "UTILITY",
        status: "pending",
        components: [{ type: "BODY", text: "Hola {{1}}" }],
      },
    );

    const text = await run(h, [
      "update",
      "--id",
      created.id,
      "--status",
      "approved",
    ]);
    assert.match(text, /order_update .* approved/);
    const after = await h.container.db.selectFrom("templates").select("status")
      .where("id", "=", created.id).executeTakeFirstOrThrow();
    assert.equal(after.status, "approved");
  },
);

engineTest(
  "templates create makes a global template by account id",
  async (h) => {
    const out = await run(h, [
      "create",
      "--account",
      h.tenant.account.id,
      "--name",
      "welcome",
      "--language",
      "en_US",
      "--category",
      "MARKETING",
      "--status",
      "approved",
      "--components",
      COMPONENTS,
    ]);
    assert.match(out, /^Created template welcome \(en_US, approved\) /);
    const rows = await h.container.db.selectFrom("templates").selectAll()
      .execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.channel_id, null);
  },
);

engineTest(
  "templates commands give usage errors for bad options",
  async (h) => {
    const base = [
      "create",
      "--account",
      h.tenant.account.slug,
      "--name",
      "welcome",
      "--language",
      "en_US",
      "--category",
      "MARKETING",
      "--components",
      COMPONENTS,
    ];
    const cases: [string[], RegExp][] = [
      [
        [...base, "--status", "live"],
        /--status must be one of pending, approved/,
      ],
      [[...base, "--status", "approved", "--category", "PROMO"], /--category/],
      [base, /Missing required option --status/],
      [
        [...base.slice(0, -1), "{nope", "--status", "approved"],
        /--components must be a JSON array/,
      ],
      [["update", "--id", crypto.randomUUID(), "--status", "gone"], /--status/],
      [["delete"], /Usage: templates create\|update/],
    ];
    for (const [args, message] of cases) {
      await assert.rejects(
        run(h, args),
        (e) => e instanceof UsageError && message.test(e.message),
        args.join(" "),
      );
    }
    await assert.rejects(
      run(h, [
        ...base,
        "--status",
        "approved",
        "--channel",
        crypto.randomUUID(),
      ]),
      (e) => e instanceof AppError && e.code === "INVALID_CHANNEL",
    );
    await assert.rejects(
      run(h, ["update", "--id", crypto.randomUUID(), "--status", "paused"]),
      (e) => e instanceof AppError && e.code === "NOT_FOUND",
    );
    const rows = await h.container.db.selectFrom("templates").select("id")
      .execute();
    assert.equal(rows.length, 0);
  },
);

// Admin commands refuse a NUL (U+0000) in what they would store, naming the
// option: SQLite would read the text back cut at it. A command line from a
// shell cannot hold a NUL, so options are checked in-process here; the JSON
// of --components can (e2e/cli_test.ts runs that case as a real process).
import assert from "node:assert/strict";
import { accountsCommand, agentsCommand } from "../../src/cli/admin.ts";
import { templatesCommand } from "../../src/cli/templates_cli.ts";
import { AppError } from "../../src/errors.ts";
import { engineTest, type Harness } from "../_harness.ts";
import { runCommand } from "../_support/cli_output.ts";

async function refused(
  h: Harness,
  command: Parameters<typeof runCommand>[0],
  args: string[],
  message: RegExp,
): Promise<void> {
  await assert.rejects(
    runCommand(command, h.container, args),
    (err: unknown) =>
      err instanceof AppError && err.code === "VALIDATION_ERROR" &&
      message.test(err.message),
    args.join(" "),
  );
}

engineTest(
  "admin commands refuse a NUL in an option or in template components, naming it",
  async (h) => {
    const slug = h.tenant.account.slug;
    await refused(
      h,
      accountsCommand,
      ["create", "--name", "Ac\u0000me", "--slug", "acme-nul"],
      /^Invalid option --name: must not contain a NUL character \(U\+0000\)$/,
    );
    await refused(
      h,
      agentsCommand,
      ["create", "--account", slug, "--name", "\u0000"],
      /^Invalid option --name: must not contain a NUL/,
    );
    await refused(h, templatesCommand, [
      "create",
      "--account",
      slug,
      "--name",
      "order_update",
      "--language",
      "es_AR",
      "--category",
      "UTILITY",
      "--status",
      "approved",
      "--components",
      '[{"type":"BODY","text":"Hola"},{"type":"FOOTER","x\\u0000":"y"}]',
    ], /components\[1\]\.x\\u0000 must not contain a NUL character/);
    const accounts = await h.container.db.selectFrom("accounts").select("slug")
      .execute();
    assert.deepEqual(accounts.map((a) => a.slug), [slug]);
    for (const table of ["agents", "templates"] as const) {
      const rows = await h.container.db.selectFrom(table).select("id")
        .execute();
      assert.equal(rows.length, 0, table);
    }
  },
);

// Docs that cannot rot (issue 31): every relative link and anchor of README,
// CONTRIBUTING and docs/ resolves; the shell blocks marked runnable run as
// written against a fresh `dev`; the configuration table lists exactly the
// variables src/config.ts reads; docs/cli.md names every command of the usage.
import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { ENV_NAMES } from "../../src/config.ts";
import { freePort } from "../_support/wait.ts";
import { credentialsOf } from "../e2e/_dev.ts";
import { runCli, startServer } from "../e2e/_process.ts";
import {
  anchors,
  relativeLinks,
  runnableBlocks,
  runnableMarkers,
  tableBetween,
} from "./_markdown.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The pages: README, CONTRIBUTING and every docs/*.md, as paths from the root. */
async function pages(): Promise<string[]> {
  const docs: string[] = [];
  for await (const e of Deno.readDir(join(ROOT, "docs"))) {
    if (e.isFile && e.name.endsWith(".md")) docs.push(`docs/${e.name}`);
  }
  return ["README.md", "CONTRIBUTING.md", ...docs.sort()];
}

const read = (page: string) => Deno.readTextFile(join(ROOT, page));

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

/** Every broken relative link of `page`: a missing file, or an anchor no heading makes. */
export async function brokenLinks(page: string): Promise<string[]> {
  const text = await read(page);
  const broken: string[] = [];
  for (const { target, line } of relativeLinks(text)) {
    const [path = "", anchor] = target.split("#", 2);
    const file = path
      ? normalize(join(dirname(join(ROOT, page)), decodeURIComponent(path)))
      : join(ROOT, page);
    const where = `${page}:${line} -> ${target}`;
    if (!await exists(file)) {
      broken.push(`${where}: no such file`);
    } else if (anchor !== undefined) {
      if (!file.endsWith(".md")) {
        broken.push(`${where}: an anchor into a file that is not Markdown`);
      } else if (!anchors(await Deno.readTextFile(file)).has(anchor)) {
        broken.push(`${where}: no heading makes #${anchor}`);
      }
    }
  }
  return broken;
}

Deno.test("README is at most 200 lines, and each docs page starts with who it is for", async () => {
  const readme = (await read("README.md")).trimEnd().split("\n");
  assert.ok(readme.length <= 200, `README.md has ${readme.length} lines`);
  for (const page of await pages()) {
    if (!page.startsWith("docs/")) continue;
    const text = await read(page);
    const first = text.split("\n\n")[1] ?? "";
    assert.match(first, /^For /, `${page} should start with "For <reader>"`);
  }
});

Deno.test("every relative link and anchor of README, CONTRIBUTING and docs/ resolves", async () => {
  const broken: string[] = [];
  for (const page of await pages()) broken.push(...await brokenLinks(page));
  assert.deepEqual(broken, []);
});

Deno.test("every file path the pages name in code spans exists", async () => {
  const missing: string[] = [];
  for (const page of await pages()) {
    const text = await read(page);
    const paths = text.matchAll(
      /`((?:src|tests|scripts|bench|examples|migrations|docs)\/[\w./-]+\.(?:ts|mjs|md|py|png))`/g,
    );
    for (const [, path] of paths) {
      if (/[A-Z]{3}/.test(path!)) continue; // a pattern: migrations/NNNN_name.ts
      if (!await exists(join(ROOT, path!))) missing.push(`${page}: ${path}`);
    }
  }
  assert.deepEqual(missing, []);
});

Deno.test("docs/configuration.md lists exactly the variables src/config.ts reads", async () => {
  const rows = tableBetween(
    await read("docs/configuration.md"),
    "config-table",
  );
  const documented = rows.flatMap((cells) =>
    [...cells[0]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!)
  );
  assert.equal(new Set(documented).size, documented.length, "one row each");
  const code = new Set(ENV_NAMES);
  assert.deepEqual(
    {
      "read by src/config.ts but not in the table": ENV_NAMES.filter((n) =>
        !documented.includes(n)
      ),
      "in the table but not read by src/config.ts": documented.filter((n) =>
        !code.has(n)
      ),
    },
    {
      "read by src/config.ts but not in the table": [],
      "in the table but not read by src/config.ts": [],
    },
  );
});

Deno.test("docs/cli.md names every command of the program's usage", async () => {
  const help = await runCli(["help"], {});
  assert.equal(help.code, 0, help.stderr);
  const commands = help.stdout.split("\n")
    .map((line) => /^ {2}([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/.exec(line))
    .filter((m) => m !== null)
    .map((m) => m[2] && !m[2].startsWith("-") ? `${m[1]} ${m[2]}` : m[1]!);
  assert.ok(commands.length >= 20, `usage lists ${commands.join(", ")}`);
  const page = await read("docs/cli.md");
  assert.deepEqual(
    commands.filter((c) => !page.includes(`\`${c}`)),
    [],
    "commands of `main.ts help` that docs/cli.md does not show",
  );
});

/** Runs `script` with bash in `cwd`, in a process group of its own (so a background job it left is ended too). */
async function runScript(
  script: string,
  cwd: string,
  env: Record<string, string>,
  timeoutMs: number,
): Promise<{ code: number; output: string }> {
  await Deno.writeTextFile(join(cwd, "runnable.sh"), script);
  const child = new Deno.Command("setsid", {
    args: ["bash", "-euo", "pipefail", "runnable.sh"],
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const timer = setTimeout(() => killGroup(child.pid), timeoutMs);
  const text = (stream: ReadableStream<Uint8Array>) =>
    new Response(stream).text();
  const stdout = text(child.stdout);
  const stderr = text(child.stderr);
  try {
    const status = await child.status;
    // A background job the script left (or a failed script stranded) holds the pipes open.
    killGroup(child.pid);
    const output =
      `--- stdout ---\n${await stdout}\n--- stderr ---\n${await stderr}`;
    return { code: status.signal ? -1 : status.code, output };
  } finally {
    clearTimeout(timer);
    killGroup(child.pid);
  }
}

function killGroup(pid: number): void {
  try {
    Deno.kill(-pid, "SIGKILL");
  } catch { /* the group is gone */ }
}

/** The runnable blocks of `page`, run in one shell (as a reader types them) against a fresh dev. */
export async function runPage(page: string): Promise<
  { code: number; output: string }
> {
  const text = await read(page);
  const blocks = runnableBlocks(text);
  assert.equal(
    blocks.length,
    runnableMarkers(text),
    `${page}: every <!-- runnable --> marker is followed by a blank line and a \`\`\`sh block`,
  );
  // The reader's directory: dev's ./data, and the repository's examples/.
  const dir = await Deno.makeTempDir({ prefix: "bm-docs-" });
  try {
    await Deno.symlink(join(ROOT, "examples"), join(dir, "examples"));
    await using server = await startServer({
      command: "dev",
      dataDir: join(dir, "data"),
    });
    await credentialsOf(server);
    const env = {
      PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
      HOME: Deno.env.get("HOME") ?? dir,
      HOOKS_PORT: String(freePort()),
    };
    const result = await runScript(blocks.join("\n"), dir, env, 90_000);
    return {
      ...result,
      output: `${result.output}\n--- dev ---\n${server.output()}`,
    };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

for (const page of ["README.md", "docs/getting-started.md"]) {
  Deno.test({
    name: `${page}'s runnable blocks run as written against a fresh dev`,
    // dev's workers and simulator outlive a step; the server is stopped at the end.
    sanitizeOps: false,
    sanitizeResources: false,
    async fn() {
      const blocks = runnableBlocks(await read(page));
      assert.ok(blocks.length > 0, `${page} has no runnable block`);
      const { code, output } = await runPage(page);
      assert.equal(code, 0, output);
    },
  });
}

Deno.test("every page with runnable blocks is run by this test", async () => {
  const withBlocks = [];
  for (const page of await pages()) {
    if (runnableMarkers(await read(page)) > 0) withBlocks.push(page);
  }
  assert.deepEqual(withBlocks, ["README.md", "docs/getting-started.md"]);
});

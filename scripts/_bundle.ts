/**
 * The bundle `deno task build` writes and the command `deno task start` runs
 * it with, both read from deno.json (so a bench or a test cannot drift from
 * them), for a directory of the caller's: a build into dist/server deletes
 * the chunks a running server may still have to read (see docs/operations.md, "Production").
 */
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const BUILT_DIR = "dist/server";

type Task = string | { command: string };

/** A task's command line, split into words (deno.json's tasks hold no quoting). */
async function task(name: string): Promise<string> {
  const tasks: Record<string, Task> =
    JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;
  const t = tasks[name];
  if (t === undefined) throw new Error(`deno.json has no "${name}" task`);
  return typeof t === "string" ? t : t.command;
}

function words(command: string): string[] {
  return command.split(/\s+/).filter(Boolean);
}

/** Builds the bundle into `outDir` (absolute) with the build task's own `deno bundle` flags. */
export async function buildBundle(outDir: string): Promise<void> {
  const build = await task("build");
  const bundle = build.split("&&").map((s) => s.trim())
    .find((s) => s.startsWith("deno bundle "));
  if (!bundle) {
    throw new Error(`The build task runs no \`deno bundle\`: ${build}`);
  }
  const args = words(bundle).slice(1);
  const at = args.indexOf("--outdir");
  if (at < 0 || args[at + 1] !== BUILT_DIR) {
    throw new Error(`The build task does not write ${BUILT_DIR}: ${build}`);
  }
  args[at + 1] = outDir;
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`Build failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * `deno task start`'s arguments to `deno` (`run`, its flags, the bundle's
 * main.js and `serve`) with `outDir` for dist/server; run them with
 * Deno.execPath().
 */
export async function startTaskArgs(outDir: string): Promise<string[]> {
  const start = await task("start");
  const [deno, ...args] = words(start);
  const entry = `${BUILT_DIR}/main.js`;
  if (deno !== "deno" || args[0] !== "run" || args.at(-2) !== entry) {
    throw new Error(
      `The start task does not run deno run … ${entry}: ${start}`,
    );
  }
  return args.map((w) => w === entry ? `${outDir}/main.js` : w);
}

/**
 * The bundle `deno task build` writes and the command `deno task start` runs
 * it with, both read from deno.json (so a bench or a test cannot drift from
 * them), for a directory of the caller's: a build into dist/server deletes
 * the chunks a running server may still have to read (see README).
 */
const ROOT = new URL("../", import.meta.url).pathname;
const BUILT_DIR = "dist/server";

async function tasks(): Promise<Record<string, string | { command: string }>> {
  return JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`)).tasks;
}

function words(command: string): string[] {
  return command.split(/\s+/).filter(Boolean);
}

/** Builds the bundle into `outDir` (absolute) with the build task's own `deno bundle` flags. */
export async function buildBundle(outDir: string): Promise<void> {
  const task = (await tasks()).build as string;
  const bundle = task.split("&&").map((s) => s.trim())
    .find((s) => s.startsWith("deno bundle "));
  if (!bundle) throw new Error("the build task runs no `deno bundle`");
  const args = words(bundle).slice(1)
    .map((w) => w === BUILT_DIR ? outDir : w);
  if (!args.includes(outDir)) throw new Error("the build task has no --outdir");
  const out = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`build failed: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * `deno task start`'s arguments to `deno` (its flags and `serve`), with the
 * bundle in `outDir` for dist/server; run them with Deno.execPath().
 */
export async function startTaskArgs(outDir: string): Promise<string[]> {
  const start = (await tasks()).start as { command: string };
  const [deno, ...args] = words(start.command);
  if (deno !== "deno") throw new Error("the start task does not run deno");
  const entry = `${BUILT_DIR}/main.js`;
  if (!args.includes(entry)) throw new Error(`the start task runs no ${entry}`);
  return args.map((w) => w === entry ? `${outDir}/main.js` : w);
}

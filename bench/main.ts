// deno-lint-ignore-file no-console
// One entry for the benchmarks: `deno task bench <name> [flags]` runs
// bench/<name>.ts with the flags; without a name it lists them. Each
// benchmark runs in a process of its own, as `deno run -A bench/<name>.ts`
// would run it, so its figures do not include this launcher.
import { fileURLToPath } from "node:url";

/** Every benchmark, with what it measures (docs/benchmarks.md has the figures). */
export const BENCHMARKS: Readonly<Record<string, string>> = {
  send: "POST /messages throughput and latency, 32 clients for 10 s",
  batch: "POST /messages/batch of 100, 4 at once: accepted messages a second",
  pipeline:
    "serve and the simulator as processes: N numbers x M messages, live sends, webhooks",
  queue: "the worker pool on 20,000 no-op jobs: jobs a second, CPU per job",
  webhooks:
    "webhook backlog drained, event-to-attempt lag, a dead subscription beside healthy ones",
  webhook_fairness:
    "one account's slow receivers beside another account's deliveries",
  meta_webhook:
    "what forged posts to /meta/webhook cost, and API latency meanwhile",
  start: "start to ready and idle memory of serve, beside Deno's floor",
  panel:
    "the inbox panel's budgets in Chromium: asset sizes, first paint, live message",
  scaleout:
    "several serve instances on sqld behind a proxy: rate, duplicates, kill, pause, restart",
};

function usage(): string {
  const width = Math.max(...Object.keys(BENCHMARKS).map((n) => n.length));
  return [
    "Usage: deno task bench <name> [flags]   (see docs/benchmarks.md)",
    "",
    ...Object.entries(BENCHMARKS).map(([name, about]) =>
      `  ${name.padEnd(width)}  ${about}`
    ),
  ].join("\n");
}

if (import.meta.main) {
  const [name, ...flags] = Deno.args;
  if (!name || name === "--help" || name === "-h") {
    console.log(usage());
    Deno.exit(0);
  }
  if (!Object.hasOwn(BENCHMARKS, name)) {
    console.error(`Unknown benchmark "${name}"\n\n${usage()}`);
    Deno.exit(2);
  }
  const file = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", file, ...flags],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  Deno.exit(code);
}

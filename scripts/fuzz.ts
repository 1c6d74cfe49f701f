// deno-lint-ignore-file no-console
// Fuzzes the API in-process: `deno run -A scripts/fuzz.ts [--runs 100000]
// [--seed N] [--path P] [--engine sqlite|libsql]`. Prints requests per
// second, the status histogram, replies per route and every finding with
// the seed and path that regenerate it (`--seed N --path P` replays one).
import { parseArgs } from "node:util";
import { runFuzz } from "../tests/_support/fuzz/run.ts";
import { summarize } from "../tests/_support/fuzz/oracle.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    runs: { type: "string" },
    seed: { type: "string" },
    path: { type: "string" },
    engine: { type: "string", default: "sqlite" },
  },
});
const seed = values.seed === undefined
  ? Date.now() % 2 ** 31
  : Number(values.seed);
// With --path, one request unless --runs says how many from there on.
const runs = Number(values.runs ?? (values.path === undefined ? 100_000 : 1));
const engine = values.engine === "libsql" ? "libsql" : "sqlite";

console.log(`fuzz: seed ${seed}, ${runs} generated requests, ${engine}`);
const result = await runFuzz({
  seed,
  runs,
  engine,
  ...(values.path === undefined ? {} : { path: values.path }),
  onProgress: (done) => {
    if (done % Number(Deno.env.get("FUZZ_PROGRESS") ?? 10_000) === 0) {
      const mb = Math.round(Deno.memoryUsage().rss / 2 ** 20);
      console.log(`  ${done} generated, rss ${mb} MB`);
    }
  },
});
const seconds = result.ms / 1000;
console.log(
  `requests:   ${result.requests} (${result.generated} generated, ${result.walked} walk, rest sweep) in ${
    seconds.toFixed(1)
  } s = ${(result.requests / seconds).toFixed(0)} requests/s`,
);
console.log(
  `unsendable: ${result.unsendable} (rejected by the client: invalid URL or header)`,
);
console.log(`jobs run:   ${result.jobsRun}; left in the table:`);
for (const [group, { count, errors }] of Object.entries(result.jobs).sort()) {
  console.log(`  ${group.padEnd(28)} ${count}`);
  for (const error of errors ?? []) console.log(`    last error: ${error}`);
}
console.log("statuses:");
for (const [status, n] of Object.entries(result.statuses).sort()) {
  console.log(`  ${status}  ${n}`);
}
console.log("replies per route:");
for (const [route, classes] of Object.entries(result.routes).sort()) {
  console.log(`  ${route.padEnd(48)} ${JSON.stringify(classes)}`);
}
console.log(`findings:   ${result.findings.length}`);
if (result.findings.length) console.log(summarize(result.findings, 2));

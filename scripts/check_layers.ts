// deno-lint-ignore-file no-console
// Keeps the import direction of CONVENTIONS.md true: http -> services ->
// repos/queue/upstream/storage -> db, and SQL only in repos, the queue and
// src/db. The rules are in scripts/layers/rules.ts; this reads src/.
import { walk } from "./_walk.ts";
import { checkLayers } from "./layers/rules.ts";

const files = new Map<string, string>();
for await (const file of walk("src")) {
  files.set(file, await Deno.readTextFile(file));
}
const problems = checkLayers(files);
if (problems.length) {
  console.error(
    `Layer check failed:\n${problems.map((p) => `  ${p}`).join("\n")}`,
  );
  Deno.exit(1);
}
console.log(`Layer check passed (${files.size} files)`);

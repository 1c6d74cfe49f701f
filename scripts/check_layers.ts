// deno-lint-ignore-file no-console
// Keeps the import direction of CONVENTIONS.md true: http -> services -> repos/queue/upstream/storage -> db.
import { walk } from "./_walk.ts";

const IMPORT_REGEXP = /(?:import|export)\s[^"']*?from\s+["']([^"']+)["']/g;

interface Rule {
  applies: (file: string) => boolean;
  forbids: (target: string) => boolean;
  why: string;
}

/** Pure parts of src/db that rules may use (formats and row types, no I/O). */
const PURE_DB_HELPERS = [
  "src/db/json.ts",
  "src/db/time.ts",
  "src/db/schema.ts",
];

const isRepo = (f: string) => f.endsWith("_repo.ts");
const isDomainPure = (f: string) =>
  f.startsWith("src/domain/") && !isRepo(f) && !f.endsWith("_service.ts");

const RULES: Rule[] = [
  {
    applies: (f) => f.startsWith("src/http/"),
    forbids: (t) =>
      t.startsWith("src/db/") || isRepo(t) || t === "src/jobs/worker_pool.ts",
    why: "http talks to services, never to the database",
  },
  {
    applies: isDomainPure,
    forbids: (t) =>
      t === "npm:kysely" || t === "npm:hono" || t.startsWith("src/http/") ||
      (t.startsWith("src/db/") && !PURE_DB_HELPERS.includes(t)),
    why: "domain rules do no I/O",
  },
  {
    applies: (f) => f.startsWith("src/domain/") || f.startsWith("src/jobs/"),
    forbids: (t) => t.startsWith("src/http/") || t === "npm:hono",
    why: "services, repos and jobs know nothing of HTTP",
  },
  {
    applies: (f) =>
      f.startsWith("src/upstream/") || f.startsWith("src/storage/") ||
      f.startsWith("src/egress/") || f.startsWith("src/metrics/"),
    forbids: (t) => t.startsWith("src/domain/") || t.startsWith("src/http/"),
    why: "adapters depend only on their own interfaces",
  },
];

function resolve(from: string, spec: string): string {
  if (spec === "hono" || spec.startsWith("hono/")) return "npm:hono";
  if (spec === "kysely") return "npm:kysely";
  if (!spec.startsWith(".")) return spec;
  const parts = from.split("/").slice(0, -1);
  for (const seg of spec.split("/")) {
    if (seg === "..") parts.pop();
    else if (seg !== ".") parts.push(seg);
  }
  return parts.join("/");
}

const problems: string[] = [];
const graph = new Map<string, string[]>();
for await (const file of walk("src")) {
  const text = await Deno.readTextFile(file);
  const targets = [...text.matchAll(IMPORT_REGEXP)].map((m) =>
    resolve(file, m[1]!)
  );
  graph.set(file, targets.filter((t) => t.startsWith("src/")));
  for (const rule of RULES) {
    if (!rule.applies(file)) continue;
    for (const t of targets) {
      if (rule.forbids(t)) problems.push(`${file} imports ${t}: ${rule.why}`);
    }
  }
  if (file !== "src/config.ts" && /\bDeno\.env\b/.test(text)) {
    problems.push(`${file} reads Deno.env: only src/config.ts may`);
  }
}

// No import cycles (depth-first search with colours).
const state = new Map<string, 1 | 2>();
function visit(node: string, path: string[]): void {
  if (state.get(node) === 2) return;
  if (state.get(node) === 1) {
    problems.push(
      `import cycle: ${[...path.slice(path.indexOf(node)), node].join(" -> ")}`,
    );
    return;
  }
  state.set(node, 1);
  for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
  state.set(node, 2);
}
for (const node of graph.keys()) visit(node, []);

if (problems.length) {
  console.error(
    `Layer check failed:\n${problems.map((p) => `  ${p}`).join("\n")}`,
  );
  Deno.exit(1);
}
console.log(`Layer check passed (${graph.size} files)`);

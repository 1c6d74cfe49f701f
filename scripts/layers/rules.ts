/**
 * The layer rules of CONVENTIONS.md ("Import direction: http -> services ->
 * repos/queue/upstream/storage -> db", the import table of
 * reference/style-anchors.md) as a pure function over a set of files.
 */
import { type ImportRef, moduleFacts } from "./module_facts.ts";

/** Where a file sits in the architecture. */
export type Layer =
  | "http"
  | "service" // src/domain/**/*_service.ts: use cases
  | "repo" // src/domain/**/*_repo.ts: all SQL of a resource
  | "domain" // every other src/domain file: types and pure rules, no I/O
  | "jobs"
  | "cron"
  | "db"
  | "adapter" // src/upstream, src/storage, src/egress, src/metrics
  | "simulator"
  | "other"; // the composition root (cli, container, lifecycle, config...)

export function layerOf(path: string): Layer {
  if (path.startsWith("src/http/")) return "http";
  if (path.startsWith("src/domain/")) {
    if (path.endsWith("_service.ts")) return "service";
    if (path.endsWith("_repo.ts")) return "repo";
    return "domain";
  }
  if (path.startsWith("src/jobs/")) return "jobs";
  if (path.startsWith("src/cron/")) return "cron";
  if (path.startsWith("src/db/")) return "db";
  if (/^src\/(upstream|storage|egress|metrics)\//.test(path)) return "adapter";
  if (path.startsWith("src/simulator/")) return "simulator";
  return "other";
}

function mayRunSql(path: string): boolean {
  return layerOf(path) === "repo" || layerOf(path) === "db" ||
    /^src\/jobs\/queue(_[a-z]+)?\.ts$/.test(path);
}

/** Formats, row types and error kinds in src/db that do no I/O. */
const PURE_DB = new Set([
  "src/db/json.ts",
  "src/db/time.ts",
  "src/db/schema.ts",
  "src/db/row_shape.ts",
  "src/db/busy.ts",
]);
/** Upstream interfaces, error tables, signature rules and a call's deadline: no network. */
const PURE_UPSTREAM = new Set([
  "src/upstream/call_deadline.ts",
  "src/upstream/graph_api.ts",
  "src/upstream/graph_errors.ts",
  "src/upstream/media_limits.ts",
  "src/upstream/meta_signature.ts",
  "src/upstream/social_graph.ts",
]);
/** Job modules that do no I/O: kinds and their payload types, retry timing. */
const PURE_JOBS = new Set([
  "src/jobs/types.ts",
  "src/jobs/kinds.ts",
  "src/jobs/attempts.ts",
  "src/jobs/retry_policy.ts",
]);
/** What services may use of src/jobs: the queue, its counts, the pure modules. */
const QUEUE_FOR_SERVICES = new Set([
  "src/jobs/queue.ts",
  "src/jobs/queue_stats.ts",
  ...PURE_JOBS,
]);
/** Node and npm modules that do no I/O (compute, schemas, parsing). */
const PURE_PACKAGES = new Set([
  "zod",
  "libphonenumber-js",
  "node:crypto",
  "node:buffer",
]);

const isHono = (t: string) =>
  t === "hono" || t.startsWith("hono/") || t.startsWith("@hono/");
const under = (t: string, dir: string) => t.startsWith(`${dir}/`);

interface Rule {
  layers: Layer[];
  /** Whether the import is forbidden; type-only imports erase at run time. */
  forbids: (target: string, ref: ImportRef) => boolean;
  why: string;
}

const RULES: Rule[] = [
  {
    layers: ["http"],
    forbids: (t) =>
      layerOf(t) === "repo" || (under(t, "src/db") && !PURE_DB.has(t)) ||
      under(t, "src/jobs"),
    why: "a route calls services, never the database or the job queue",
  },
  {
    layers: ["http"],
    forbids: (t) =>
      /^src\/(upstream|storage|egress)\//.test(t) && !PURE_UPSTREAM.has(t),
    why: "a route calls services, never an upstream or storage client",
  },
  {
    layers: ["http"],
    forbids: (t, ref) => t === "src/container.ts" && !ref.typeOnly,
    why: "a route gets the container from its factory (type import only)",
  },
  {
    layers: ["service", "repo", "domain", "jobs", "cron", "db", "adapter"],
    forbids: (t) => isHono(t) || under(t, "src/http"),
    why: "only src/http knows HTTP",
  },
  {
    layers: ["domain"],
    forbids: (t, ref) =>
      !ref.typeOnly && (
        t === "kysely" || /^node:/.test(t) && !PURE_PACKAGES.has(t) ||
        (under(t, "src/db") && !PURE_DB.has(t)) ||
        ["service", "repo", "cron", "simulator"].includes(layerOf(t)) ||
        (layerOf(t) === "jobs" && !PURE_JOBS.has(t)) ||
        (layerOf(t) === "adapter" && !PURE_UPSTREAM.has(t))
      ),
    why:
      "domain types and rules do no I/O (I/O goes in *_repo.ts or *_service.ts)",
  },
  {
    layers: ["repo"],
    forbids: (t) =>
      ["service", "jobs", "cron", "adapter", "simulator"].includes(layerOf(t)),
    why:
      "a repo runs SQL on the executor it is given and calls nothing above it",
  },
  {
    layers: ["service"],
    forbids: (t, ref) =>
      (under(t, "src/db") && !PURE_DB.has(t) && !ref.typeOnly) ||
      (under(t, "src/jobs") && !QUEUE_FOR_SERVICES.has(t) && !ref.typeOnly) ||
      t === "src/upstream/graph_client.ts" ||
      /^src\/storage\/(disk|s3|create)_/.test(t),
    why:
      "a service uses repos, the queue and upstream/storage interfaces it is given",
  },
  {
    layers: ["jobs", "cron"],
    forbids: (t) =>
      under(t, "src/db") && !PURE_DB.has(t) && t !== "src/db/prune.ts" &&
      t !== "src/db/job_insert_hook.ts" && t !== "src/db/bulk.ts" &&
      t !== "src/db/raw.ts",
    why:
      "jobs reach the database through repos, the queue, db/prune.ts, db/bulk.ts (multi-row inserts), the JobInsertHook (announceJobInsert) and db/raw.ts (the queue's fixed texts)",
  },
  {
    layers: ["cron"],
    forbids: (t) =>
      ["service", "repo", "adapter", "simulator"].includes(layerOf(t)),
    why: "cron only enqueues",
  },
  {
    layers: ["adapter"],
    forbids: (t) =>
      ["service", "repo", "domain", "jobs", "db", "cron"].includes(layerOf(t)),
    why: "adapters depend only on their own interfaces",
  },
  {
    layers: ["db"],
    forbids: (t) => under(t, "src") && layerOf(t) !== "db",
    why: "the database layer is the bottom: it imports nothing of src/",
  },
  {
    layers: ["simulator"],
    forbids: (t) =>
      under(t, "src") && !under(t, "src/simulator") &&
      !PURE_UPSTREAM.has(t) && !["src/crypto.ts", "src/log.ts"].includes(t),
    why: "the simulator stands in for Meta and shares nothing but wire rules",
  },
];

/** Resolves a specifier to a repository path, or returns the bare package. */
export function resolveSpecifier(from: string, spec: string): string {
  if (!spec.startsWith(".")) return spec.replace(/^(npm|jsr):/, "");
  const parts = from.split("/").slice(0, -1);
  for (const seg of spec.split("/")) {
    if (seg === "..") parts.pop();
    else if (seg !== ".") parts.push(seg);
  }
  return parts.join("/");
}

/**
 * Checks a set of files (repository path -> source) and returns one line per
 * problem, empty when the tree keeps the layers. Paths outside src/ are read
 * for imports but only src/ files are held to the rules.
 */
export function checkLayers(files: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  const graph = new Map<string, string[]>();
  for (const [file, source] of files) {
    let facts;
    try {
      facts = moduleFacts(source);
    } catch (error) {
      problems.push(`${file}: cannot be read: ${(error as Error).message}`);
      continue;
    }
    const layer = layerOf(file);
    const edges: string[] = [];
    for (const ref of facts.imports) {
      const target = resolveSpecifier(file, ref.specifier);
      if (target.startsWith("src/")) edges.push(target);
      for (const rule of RULES) {
        if (rule.layers.includes(layer) && rule.forbids(target, ref)) {
          problems.push(
            `${file}:${ref.line} imports "${ref.specifier}" (${ref.form}): ${rule.why}`,
          );
        }
      }
    }
    graph.set(file, edges);
    for (const line of facts.opaqueDynamicImports) {
      problems.push(
        `${file}:${line} has import() of a computed specifier: the layer check cannot follow it (use a string literal)`,
      );
    }
    if (!mayRunSql(file)) {
      for (const use of facts.sql) {
        problems.push(
          `${file}:${use.line} runs SQL (${use.what}): SQL lives in *_repo.ts, the queue (src/jobs/queue*.ts) and src/db/`,
        );
      }
    }
    if (file !== "src/config.ts") {
      for (const line of facts.envReads) {
        problems.push(`${file}:${line} reads Deno.env: only src/config.ts may`);
      }
    }
    if (file !== "src/log.ts") {
      for (const line of facts.consoleUses) {
        problems.push(`${file}:${line} uses console: only src/log.ts may`);
      }
    }
  }
  problems.push(...findCycles(graph));
  return problems;
}

/** Import cycles, type imports included (a type cycle is still a tangle). */
function findCycles(graph: Map<string, string[]>): string[] {
  const problems: string[] = [];
  const state = new Map<string, 1 | 2>();
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === 2) return;
    if (state.get(node) === 1) {
      const cycle = [...path.slice(path.indexOf(node)), node];
      problems.push(`import cycle: ${cycle.join(" -> ")}`);
      return;
    }
    state.set(node, 1);
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 2);
  };
  for (const node of graph.keys()) visit(node, []);
  return problems;
}

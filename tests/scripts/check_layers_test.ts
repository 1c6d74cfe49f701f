import assert from "node:assert/strict";
import { walk } from "../../scripts/_walk.ts";
import { moduleFacts } from "../../scripts/layers/module_facts.ts";
import { checkLayers } from "../../scripts/layers/rules.ts";

/** A small tree that keeps every rule, with the traps a regexp falls into. */
const CLEAN: Record<string, string> = {
  "src/config.ts": `export const port = Deno.env.get("PORT");`,
  "src/errors.ts": `export class AppError extends Error {}`,
  "src/container.ts": `
    import { openDatabase } from "./db/database.ts";
    import { createGraphClient } from "./upstream/graph_client.ts";
    export const container = { db: openDatabase(), graph: createGraphClient() };
    export type Container = typeof container;`,
  "src/db/schema.ts": `export interface Database { contacts: { id: string } }
    export type Executor = unknown;`,
  "src/db/database.ts": `
    import { DatabaseSync } from "node:sqlite";
    export function openDatabase() { return new DatabaseSync(":memory:"); }`,
  "src/jobs/queue.ts": `
    import { sql } from "kysely";
    import type { Executor } from "../db/schema.ts";
    export async function enqueue(db: Executor) {
      await sql\`insert into jobs default values\`.execute(db);
    }`,
  "src/upstream/graph_api.ts": `
    import { AppError } from "../errors.ts";
    export class UpstreamError extends AppError {}
    export interface GraphApi { send(): Promise<void> }`,
  "src/upstream/graph_client.ts": `
    import type { GraphApi } from "./graph_api.ts";
    export function createGraphClient(): GraphApi {
      return { send: async () => { await fetch("https://graph"); } };
    }`,
  "src/domain/contacts/contact.ts": `
    import { z } from "zod";
    import { AppError } from "../../errors.ts";
    // import { Hono } from "hono"; a comment is not an import
    export const Name = z.string().regex(/^["'\`]import\\("x"\\)$/);
    export const help = "write import 'x' or db.selectFrom('contacts')";
    export const nested = \`\${\`import("../../db/database.ts")\`} done\`;
    export function check(name: string) {
      if (!name) throw new AppError();
      let n = name.length;
      n++ / 2;
      return n / 2 / 1;
    }`,
  "src/domain/contacts/contact_repo.ts": `
    import { sql } from "kysely";
    import type { Executor } from "../../db/schema.ts";
    import { check } from "./contact.ts";
    export async function findContact(db: Executor, id: string) {
      check(id);
      await sql\`select 1\`.execute(db);
      return await db.selectFrom("contacts").where("id", "=", id).execute();
    }`,
  "src/domain/contacts/contact_service.ts": `
    import {
      type Executor,
    } from "../../db/schema.ts";
    import type { GraphApi } from "../../upstream/graph_api.ts";
    import { enqueue } from "../../jobs/queue.ts";
    import { findContact } from "./contact_repo.ts";
    export type ContactModule = typeof import("./contact.ts");
    export async function getContact(db: Executor, graph: GraphApi, id: string) {
      await db.transaction().execute(async (trx) => await enqueue(trx));
      if (import.meta.main) await graph.send();
      return await findContact(db, id);
    }`,
  "src/http/routes/contacts.ts": `
    import { OpenAPIHono } from "@hono/zod-openapi";
    import type { Container } from "../../container.ts";
    import { getContact } from "../../domain/contacts/contact_service.ts";
    import { type Name } from "../../domain/contacts/contact.ts";
    export function contactRoutes(c: Container) {
      const app = new OpenAPIHono();
      app.get("/", async () => await getContact(c.db, c.graph, "x"));
      return app;
    }`,
  "src/cli/serve.ts": `
    export async function serve() {
      const { container } = await import("../container.ts");
      return container;
    }`,
};

function check(overrides: Record<string, string>): string[] {
  return checkLayers(new Map(Object.entries({ ...CLEAN, ...overrides })));
}

/** Asserts that planting `source` at `file` is reported, with `why` in the line. */
function assertCaught(file: string, source: string, why: string): void {
  const problems = check({ [file]: source });
  assert.ok(
    problems.some((p) => p.startsWith(`${file}:`) && p.includes(why)),
    `expected "${why}" for ${file}, got:\n${problems.join("\n")}`,
  );
}

const ROUTE = "src/http/routes/contacts.ts";
const SERVICE = "src/domain/contacts/contact_service.ts";

Deno.test("checkLayers() passes the clean fixture, traps included", () => {
  assert.deepEqual(check({}), []);
});

Deno.test("checkLayers() passes the real src/ tree", async () => {
  const files = new Map<string, string>();
  for await (const file of walk("src")) {
    files.set(file, await Deno.readTextFile(file));
  }
  assert.ok(files.size > 100);
  assert.deepEqual(checkLayers(files), []);
});

/** Planted violations: [what, file, source planted there, part of the report line]. */
const PLANTED: [string, string, string, string][] = [
  [
    "a route importing the job queue",
    ROUTE,
    `import { enqueue } from "../../jobs/queue.ts";`,
    "never the database or the job queue",
  ],
  [
    "a route importing the Graph client",
    ROUTE,
    `import { createGraphClient } from "../../upstream/graph_client.ts";`,
    "never an upstream or storage client",
  ],
  [
    "a repo importing a service",
    "src/domain/contacts/contact_repo.ts",
    `import { getContact } from "./contact_service.ts";`,
    "calls nothing above it",
  ],
  [
    "a pure domain file importing @hono/zod-openapi",
    "src/domain/contacts/contact.ts",
    `import { z } from "@hono/zod-openapi";\nexport const Name = z.string();`,
    "only src/http knows HTTP",
  ],
  [
    "a dynamic import() of the database in a route",
    ROUTE,
    `export async function r() {\n  return await import("../../db/database.ts");\n}`,
    "(dynamic)",
  ],
  [
    "a side-effect import of the database in a route",
    ROUTE,
    `import "../../db/database.ts";`,
    "(side-effect)",
  ],
  [
    "a type-only import of a repo in a route",
    ROUTE,
    `import type { findContact } from "../../domain/contacts/contact_repo.ts";`,
    "never the database",
  ],
  [
    "a route re-exporting a repo",
    ROUTE,
    `export { findContact } from "../../domain/contacts/contact_repo.ts";`,
    "(export-from)",
  ],
  [
    "a multi-line import with type and value names",
    ROUTE,
    `import {\n  type Executor,\n  enqueue, // the queue\n} from "../../jobs/queue.ts";`,
    "(import)",
  ],
  [
    "query builder SQL in a service",
    SERVICE,
    `export async function f(db: any) {\n  return await db\n    .selectFrom("contacts").selectAll().execute();\n}`,
    "runs SQL (.selectFrom(",
  ],
  [
    "an optional-chained delete in a service",
    SERVICE,
    `export async function f(db: any) {\n  await db?.deleteFrom("contacts").execute();\n}`,
    "runs SQL (.deleteFrom(",
  ],
  [
    "kysely's sql imported into a service",
    SERVICE,
    `import { sql } from "kysely";\nexport const q = sql\`delete from contacts\`;`,
    `runs SQL (import { sql } from "kysely")`,
  ],
  [
    "kysely's sql imported under another name into a job",
    "src/jobs/maintenance.ts",
    `import { sql as raw } from "kysely";\nexport const q = raw;`,
    "runs SQL",
  ],
  [
    "a sql template from elsewhere in a service",
    SERVICE,
    `import { sql } from "../../db/sql.ts";\nexport const q = sql\`select 1\`;`,
    "runs SQL (sql`...` template)",
  ],
  [
    "a service opening the database driver",
    SERVICE,
    `import { DatabaseSync } from "node:sqlite";\nexport const d = DatabaseSync;`,
    `driver "node:sqlite"`,
  ],
  [
    "import() of a variable",
    "src/cli/serve.ts",
    `export async function serve(name: string) {\n  return await import(name);\n}`,
    "import() of a computed specifier",
  ],
  [
    "import() of a template with a substitution",
    "src/cli/serve.ts",
    "export const m = import(`../${'container'}.ts`);",
    "import() of a computed specifier",
  ],
  [
    "a domain file doing I/O through the queue",
    "src/domain/contacts/contact.ts",
    `import { enqueue } from "../../jobs/queue.ts";\nexport const e = enqueue;`,
    "domain types and rules do no I/O",
  ],
  [
    "an adapter importing the domain",
    "src/upstream/graph_client.ts",
    `import { check } from "../domain/contacts/contact.ts";\nexport const c = check;`,
    "adapters depend only on their own interfaces",
  ],
  [
    "db importing the queue",
    "src/db/database.ts",
    `import { enqueue } from "../jobs/queue.ts";\nexport const e = enqueue;`,
    "the database layer is the bottom",
  ],
  [
    "cron importing a service",
    "src/cron/schedules.ts",
    `import { getContact } from "../domain/contacts/contact_service.ts";\nexport const g = getContact;`,
    "cron only enqueues",
  ],
  [
    "Deno.env read outside config.ts",
    SERVICE,
    `export const k = Deno.env.get("KEY");`,
    "Deno.env",
  ],
  [
    "console used outside log.ts",
    SERVICE,
    `export function f() {\n  console.log("x");\n}`,
    "uses console",
  ],
];

for (const [what, file, source, why] of PLANTED) {
  Deno.test(`${what} is caught`, () => assertCaught(file, source, why));
}

Deno.test("import cycles are caught", () => {
  const problems = check({
    "src/domain/contacts/contact.ts": `import "./contact_rules.ts";`,
    "src/domain/contacts/contact_rules.ts": `import "./contact.ts";`,
  });
  assert.ok(problems.some((p) => p.startsWith("import cycle:")), problems[0]);
});

Deno.test("moduleFacts() reads every import form and skips comments and strings", () => {
  const facts = moduleFacts(`
    #!/usr/bin/env -S deno run
    import a from "a"; import * as b from "b";
    import c, { d as e, type F } from "c";
    import type { G } from "g";
    import { type H } from "h";
    import "side";
    export * from "star"; export type { I } from "i";
    export { j } from "j"; export { k };
    const l = await import("l", { with: { type: "json" } });
    type M = typeof import("m");
    // import "commented";
    /* import("block") */
    const s = "import 'in-string'";
    const t = \`import("\${"in-template"}")\`;
    const u = import.meta.url;
  `);
  assert.deepEqual(
    facts.imports.map((r) => [r.specifier, r.form, r.typeOnly]),
    [
      ["a", "import", false],
      ["b", "import", false],
      ["c", "import", false],
      ["g", "import", true],
      ["h", "import", true],
      ["side", "side-effect", false],
      ["star", "export-from", false],
      ["i", "export-from", true],
      ["j", "export-from", false],
      ["l", "dynamic", false],
      ["m", "dynamic", true],
    ],
  );
  assert.deepEqual(facts.opaqueDynamicImports, []);
  assert.deepEqual(facts.sql, []);
});

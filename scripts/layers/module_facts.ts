/**
 * What the layer check needs to know about one module: every import (in
 * every form), every place it runs SQL, every read of `Deno.env` and every
 * use of `console`.
 */
import { type Token, tokenize } from "./tokens.ts";

export type ImportForm =
  | "import" // import x from "m", import { x } from "m", import * as x from "m"
  | "export-from" // export { x } from "m", export * from "m"
  | "side-effect" // import "m"
  | "dynamic"; // import("m"), and the type form typeof import("m")

export interface ImportRef {
  specifier: string;
  form: ImportForm;
  /** `import type`, `export type`, or every named binding marked `type`. */
  typeOnly: boolean;
  line: number;
}

export interface ModuleFacts {
  imports: ImportRef[];
  /** `import(expr)` whose argument is not a string literal. */
  opaqueDynamicImports: number[];
  /** How the module runs SQL, one entry per use: `what` says which form. */
  sql: { what: string; line: number }[];
  envReads: number[];
  consoleUses: number[];
}

/**
 * How SQL is recognised (a module that does none of these runs no SQL):
 * - a Kysely query builder started on an executor: `.selectFrom(`,
 *   `.selectNoFrom(`, `.insertInto(`, `.replaceInto(`, `.updateTable(`,
 *   `.deleteFrom(`, `.mergeInto(`, and `.executeQuery(` for compiled SQL;
 * - Kysely's raw SQL: importing `sql` or `CompiledQuery` from "kysely", or a
 *   `sql` tagged template wherever `sql` comes from;
 * - a database driver: importing "node:sqlite" or "@libsql/client".
 * Passing an executor along, opening a transaction (`db.transaction()`) and
 * importing Kysely's types are not SQL: services do those by design.
 */
export const QUERY_BUILDER_METHODS = new Set([
  "selectFrom",
  "selectNoFrom",
  "insertInto",
  "replaceInto",
  "updateTable",
  "deleteFrom",
  "mergeInto",
  "executeQuery",
]);
const RAW_SQL_EXPORTS = new Set(["sql", "CompiledQuery"]);
const DRIVERS = new Set(["node:sqlite", "@libsql/client"]);

/** Reads the imports, SQL uses, env reads and console uses of one module's source. */
export function moduleFacts(source: string): ModuleFacts {
  const tokens = tokenize(source);
  const facts: ModuleFacts = {
    imports: [],
    opaqueDynamicImports: [],
    sql: [],
    envReads: [],
    consoleUses: [],
  };
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const previous = tokens[i - 1];
    const next = tokens[i + 1];
    const isMember = previous?.kind === "punct" && previous.text === ".";
    if (t.kind !== "id" || isMember) continue;
    if (t.text === "import") readImport(tokens, i, facts);
    else if (t.text === "export") readReexport(tokens, i, facts);
    else if (t.text === "sql" && next?.kind === "tpl") {
      facts.sql.push({ what: "sql`...` template", line: t.line });
    } else if (
      t.text === "Deno" && isPunct(next, ".") && tokens[i + 2]?.text === "env"
    ) {
      facts.envReads.push(t.line);
    } else if (t.text === "console" && isPunct(next, ".")) {
      facts.consoleUses.push(t.line);
    }
  }
  for (let i = 1; i + 1 < tokens.length; i++) {
    const t = tokens[i]!;
    if (
      t.kind === "id" && QUERY_BUILDER_METHODS.has(t.text) &&
      isPunct(tokens[i - 1], ".") && isPunct(tokens[i + 1], "(")
    ) {
      facts.sql.push({ what: `.${t.text}(`, line: t.line });
    }
  }
  for (const ref of facts.imports) {
    if (DRIVERS.has(ref.specifier)) {
      facts.sql.push({ what: `driver "${ref.specifier}"`, line: ref.line });
    }
  }
  return facts;
}

function isPunct(token: Token | undefined, text: string): boolean {
  return token?.kind === "punct" && token.text === text;
}

function literal(token: Token | undefined): string | null {
  if (token?.kind === "str") return token.text;
  if (token?.kind === "tpl") return token.text;
  return null;
}

function readImport(tokens: Token[], at: number, facts: ModuleFacts): void {
  const next = tokens[at + 1];
  const line = tokens[at]!.line;
  if (isPunct(next, ".")) return; // import.meta
  if (isPunct(next, "(")) {
    const specifier = literal(tokens[at + 2]);
    const after = tokens[at + 3];
    if (specifier !== null && (isPunct(after, ")") || isPunct(after, ","))) {
      const typeOnly = tokens[at - 1]?.text === "typeof";
      facts.imports.push({ specifier, form: "dynamic", typeOnly, line });
    } else {
      facts.opaqueDynamicImports.push(line);
    }
    return;
  }
  if (next?.kind === "str") {
    facts.imports.push({
      specifier: next.text,
      form: "side-effect",
      typeOnly: false,
      line,
    });
    return;
  }
  const clause = readClause(tokens, at + 1);
  if (!clause) return; // import x = require(...) and other forms we do not use
  facts.imports.push({ ...clause, form: "import", line });
  if (clause.specifier === "kysely") {
    for (const name of clause.values) {
      if (RAW_SQL_EXPORTS.has(name)) {
        facts.sql.push({ what: `import { ${name} } from "kysely"`, line });
      }
    }
  }
}

function readReexport(tokens: Token[], at: number, facts: ModuleFacts): void {
  const next = tokens[at + 1];
  const starts = isPunct(next, "{") || isPunct(next, "*") ||
    (next?.text === "type" &&
      (isPunct(tokens[at + 2], "{") || isPunct(tokens[at + 2], "*")));
  if (!starts) return; // a local declaration: export const, export function...
  const clause = readClause(tokens, at + 1);
  if (clause) {
    facts.imports.push({
      specifier: clause.specifier,
      typeOnly: clause.typeOnly,
      form: "export-from",
      line: tokens[at]!.line,
    });
  }
}

/**
 * Reads an import or export clause up to `from "m"`. Returns null when the
 * tokens are not a clause (a local `export { a, b }` has no `from`).
 * `values` are the imported names not marked `type` (the original names).
 */
function readClause(
  tokens: Token[],
  from: number,
): { specifier: string; typeOnly: boolean; values: string[] } | null {
  let i = from;
  let typeOnly = false;
  if (tokens[i]?.text === "type" && tokens[i + 1]?.text !== "from") {
    typeOnly = true;
    i++;
  }
  const values: string[] = [];
  let names = 0;
  let depth = 0;
  let pendingType = false;
  let afterAs = false;
  for (; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (depth === 0 && t.kind === "id" && t.text === "from") {
      const specifier = tokens[i + 1];
      if (specifier?.kind !== "str") return null;
      return {
        specifier: specifier.text,
        typeOnly: typeOnly || (names > 0 && values.length === 0),
        values,
      };
    }
    if (isPunct(t, "{")) depth++;
    else if (isPunct(t, "}")) depth--;
    else if (isPunct(t, ",")) {
      pendingType = false;
      afterAs = false;
    } else if (isPunct(t, "*")) {
      names++;
      values.push("*");
    } else if (t.kind === "id" || t.kind === "str") {
      if (t.text === "as") afterAs = true;
      else if (depth > 0 && t.text === "type" && !pendingType && !afterAs) {
        pendingType = true;
      } else if (!afterAs) {
        names++;
        if (!pendingType) values.push(t.text);
      }
    } else return null;
    if (depth < 0) return null;
  }
  return null;
}

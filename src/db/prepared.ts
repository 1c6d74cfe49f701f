import { type Compilable, CompiledQuery } from "kysely";
import type { Database, Executor } from "./schema.ts";

const MARK = "\u0000prepared:";

/**
 * A query built with Kysely (typed tables and columns) but compiled once:
 * `build` receives a placeholder for each named parameter, the first call
 * compiles it, and every call after only binds values to the same SQL text
 * (which the SQLite adapter's statement cache then finds prepared). For the
 * hot statements where building and compiling cost more than running.
 * Values that are not placeholders (constants in `build`) stay as compiled.
 */
export function prepared<P extends string, R>(
  build: (db: Executor, param: (name: P) => string) => Compilable<R>,
): (db: Executor, values: Record<P, unknown>) => CompiledQuery<R> {
  let compiled: CompiledQuery<R> | undefined;
  let slots: (P | undefined)[] = [];
  return (db, values) => {
    if (!compiled) {
      compiled = build(db, (name) => MARK + name).compile();
      slots = compiled.parameters.map((p) =>
        typeof p === "string" && p.startsWith(MARK)
          ? p.slice(MARK.length) as P
          : undefined
      );
    }
    const fixed = compiled.parameters;
    return CompiledQuery.raw(
      compiled.sql,
      slots.map((name, i) => name === undefined ? fixed[i] : values[name]),
    ) as CompiledQuery<R>;
  };
}

const insertTexts = new Map<string, string>();

/**
 * The insert of one row into `table`, its columns the keys of `row` (in
 * their order) and `suffix` (an ON CONFLICT clause) after the values: the
 * SQL text is written once per table, column list and suffix, so a hot
 * single-row insert skips Kysely's building and compiling. `row` must come
 * from code (a table row type), never from a request: its keys are written
 * into the SQL as identifiers.
 */
export function insertRow<R extends object>(
  table: keyof Database,
  row: R,
  suffix = "",
): CompiledQuery<never> {
  const columns = Object.keys(row);
  const key = `${table}\u0000${columns.join(",")}\u0000${suffix}`;
  let text = insertTexts.get(key);
  if (!text) {
    text = `insert into "${table}" (${
      columns.map((c) => `"${c}"`).join(", ")
    }) values (${columns.map(() => "?").join(", ")})${
      suffix ? ` ${suffix}` : ""
    }`;
    insertTexts.set(key, text);
  }
  return CompiledQuery.raw(text, Object.values(row)) as CompiledQuery<never>;
}

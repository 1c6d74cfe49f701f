// Many rows in one statement of fixed text: the rows travel as one JSON
// parameter that SQLite unpacks with json_each. The text does not change
// with the number of rows, so it is prepared once and never meets SQLite's
// limit on bound variables (the batch path's bulk writes and lookups).
import { CompiledQuery } from "kysely";

/**
 * `insert into <table> (<columns>) select ... from json_each(?)`: one row per
 * element of the parameter (an array of arrays, columns in this order),
 * inserted in array order (so autoincrement keys follow it).
 */
export function jsonInsertSql(table: string, columns: readonly string[]) {
  const values = columns.map((_, i) => `value ->> ${i}`).join(", ");
  return `insert into ${table} (${columns.join(", ")})
    select ${values} from json_each(?) order by key`;
}

/** How JSON.stringify writes a lone surrogate (a false alarm only costs the slow path). */
const LONE_SURROGATE_ESCAPE = /\\ud[89a-f][0-9a-f]{2}/i;

/**
 * The JSON parameter of a json_each statement. Strings are made well formed
 * (a lone surrogate becomes U+FFFD), as both engines store one bound as a
 * parameter (see libsql_dialect.ts); JSON.stringify would escape it instead.
 */
export function jsonParam(rows: readonly unknown[]): string {
  const text = JSON.stringify(rows);
  if (!LONE_SURROGATE_ESCAPE.test(text)) return text;
  return JSON.stringify(
    rows,
    (_key, value) => typeof value === "string" ? value.toWellFormed() : value,
  );
}

/** A json_each statement of fixed text with its one JSON parameter. */
export function jsonQuery<R>(
  text: string,
  rows: readonly unknown[],
  ...before: unknown[]
): CompiledQuery<R> {
  return CompiledQuery.raw(text, [...before, jsonParam(rows)]) as CompiledQuery<
    R
  >;
}

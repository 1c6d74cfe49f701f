// Many rows in one statement, for the batch path's bulk writes and lookups.
import { CompiledQuery } from "kysely";
import type { Executor } from "./schema.ts";

/** SQLite's default limit on bound variables per statement (since 3.32). */
const MAX_VARIABLES = 32_766;

/** `insert ... values` texts by table, columns and row count, written once each. */
const insertTexts = new Map<string, string>();

function insertText(table: string, columns: readonly string[], n: number) {
  const key = `${table}(${columns.join(",")})${n}`;
  let text = insertTexts.get(key);
  if (!text) {
    const row = `(${columns.map(() => "?").join(", ")})`;
    text = `insert into ${table} (${columns.join(", ")}) values ${
      Array.from({ length: n }, () => row).join(", ")
    }`;
    insertTexts.set(key, text);
  }
  return text;
}

/**
 * Inserts `rows` (each the values of `columns` in order) with multi-row
 * inserts, as few as SQLite's variable limit allows (one for any batch of up
 * to 100 rows); rows go in the order given, so autoincrement keys follow it.
 * Bound values, not JSON unpacked by SQLite: `value ->> i` over json_each
 * cost 4x the CPU per row of 17 columns.
 */
export async function insertRows(
  db: Executor,
  table: string,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
): Promise<void> {
  const per = Math.floor(MAX_VARIABLES / columns.length);
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    await db.executeQuery(
      CompiledQuery.raw(insertText(table, columns, chunk.length), chunk.flat()),
    );
  }
}

/**
 * A statement of fixed text whose last parameter is JSON (`rows`), read with
 * json_each: one prepared statement for any number of rows and no variable
 * limit. For lookups (`in (select value from json_each(?))`) and updates
 * that read few values per row.
 */
export function jsonQuery<R>(
  text: string,
  rows: readonly unknown[],
  ...before: unknown[]
): CompiledQuery<R> {
  return CompiledQuery.raw(text, [
    ...before,
    JSON.stringify(rows),
  ]) as CompiledQuery<
    R
  >;
}

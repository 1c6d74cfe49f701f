// Many rows in one statement, for the batch path's bulk writes and lookups.
import { CompiledQuery } from "kysely";
import type { Database, Executor } from "./schema.ts";

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
 * The bound values of `rows`, row by row in `columns` order: one array
 * filled in place (a flatMap of per-row arrays cost twice the CPU).
 */
function rowValues<R extends object>(
  rows: readonly R[],
  columns: readonly (keyof R)[],
): unknown[] {
  const values = new Array<unknown>(rows.length * columns.length);
  let i = 0;
  for (const row of rows) for (const c of columns) values[i++] = row[c];
  return values;
}

/**
 * Inserts `rows` of `table` with multi-row inserts, as few as SQLite's
 * variable limit allows (one for any batch of up to 100 rows); rows go in the
 * order given, so autoincrement keys follow it. The columns are the keys of
 * the first row: rows must come from code (a table row type), never from a
 * request. Bound values, not JSON unpacked by SQLite: `value ->> i` over
 * json_each cost 4x the CPU per row of 17 columns.
 */
export async function insertRows<R extends object>(
  db: Executor,
  table: keyof Database,
  rows: readonly R[],
): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!) as (keyof R & string)[];
  const per = Math.floor(MAX_VARIABLES / columns.length);
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    await db.executeQuery(
      CompiledQuery.raw(
        insertText(table, columns, chunk.length),
        rowValues(chunk, columns),
      ),
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

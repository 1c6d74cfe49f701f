// Many rows in one statement, for the batch path's bulk writes and lookups.
import { CompiledQuery } from "kysely";
import { announceJobInsert } from "./job_insert_hook.ts";
import type { Database, Executor } from "./schema.ts";

/** SQLite's default limit on bound variables per statement (since 3.32). */
const MAX_VARIABLES = 32_766;

/** Insert texts kept at most (a text of 100 rows is some KB); the oldest goes first. */
const TEXTS_KEPT = 256;

/** `insert ... values` texts by table, columns, shared columns and row count, written once each. */
const insertTexts = new Map<string, string>();

/**
 * The text of an insert of `n` rows. A column marked in `shared` holds the
 * same value in every row: it is one numbered parameter (?1 to ?k, in
 * column order) that every row names, bound once; the other values are
 * plain `?` in row order. SQLite numbers a plain `?` one past the highest
 * number seen before it, so the unused `with` names ?k first: the plain
 * ones are k+1, k+2, ... (Only k parameters are numbered: node:sqlite binds
 * a numbered one in time growing with the count of numbered ones, 2 us each
 * at 1,000 of them.)
 */
function insertText(
  table: string,
  columns: readonly string[],
  shared: readonly boolean[],
  n: number,
  tail: string,
): string {
  const key = `${table}(${columns.join(",")})${
    shared.map((s) => s ? 1 : 0).join("")
  }:${n}${tail}`;
  let text = insertTexts.get(key);
  if (!text) {
    let k = 0;
    const params = shared.map((isShared) => isShared ? `?${++k}` : "?");
    const row = `(${params.join(", ")})`;
    text = `${k ? `with shared as (select ?${k}) ` : ""}insert into ${table} (${
      columns.join(", ")
    }) values ${Array.from({ length: n }, () => row).join(", ")}${tail}`;
    if (insertTexts.size >= TEXTS_KEPT) {
      insertTexts.delete(insertTexts.keys().next().value!);
    }
    insertTexts.set(key, text);
  }
  return text;
}

/**
 * The bound values of insertText() for `rows`, and which columns are
 * shared: those whose value is the same (===) in every row (of two or
 * more), bound once, before the others row by row in `columns` order.
 * node:sqlite takes about 150 ns to bind a string (25 a null or a number),
 * and the rows of a batch share their account, their times and their
 * constants: about 30 of the 53 strings bound per batch message. Each value
 * is read from its row once (a read by column name costs more than the
 * comparisons over the array).
 */
function boundValues<R extends object>(
  rows: readonly R[],
  columns: readonly (keyof R)[],
): { shared: boolean[]; values: unknown[] } {
  const n = columns.length;
  const flat = new Array<unknown>(rows.length * n);
  let i = 0;
  for (const row of rows) for (const c of columns) flat[i++] = row[c];
  const shared = new Array<boolean>(n);
  let k = 0;
  for (let j = 0; j < n; j++) {
    let same = rows.length > 1;
    for (let at = j + n; same && at < flat.length; at += n) {
      same = flat[at] === flat[j];
    }
    shared[j] = same;
    if (same) k++;
  }
  if (k === 0) return { shared, values: flat };
  const values = new Array<unknown>(k + rows.length * (n - k));
  let v = 0;
  for (let j = 0; j < n; j++) if (shared[j]) values[v++] = flat[j];
  for (let at = 0; at < flat.length; at += n) {
    for (let j = 0; j < n; j++) if (!shared[j]) values[v++] = flat[at + j];
  }
  return { shared, values };
}

/**
 * Inserts `rows` of `table` with multi-row inserts, as few as SQLite's
 * variable limit allows (one for any batch of up to 100 rows); rows go in the
 * order given, so autoincrement keys follow it. A value every row has is
 * bound once (boundValues). The columns are the keys of the first row:
 * rows must come from code (a table row type), never from a request. Bound
 * values, not JSON unpacked by SQLite: `value ->> i` over json_each cost 4x
 * the CPU per row of 17 columns. `onConflictDoNothing` skips a row that
 * breaks a unique constraint; `announce` marks a job insert for the
 * JobInsertHook with the lanes of its rows (announceJobInsert).
 */
export async function insertRows<R extends object>(
  db: Executor,
  table: keyof Database,
  rows: readonly R[],
  options: { onConflictDoNothing?: boolean; announce?: Set<number> } = {},
): Promise<void> {
  if (rows.length === 0) return;
  const tail = options.onConflictDoNothing ? " on conflict do nothing" : "";
  const columns = Object.keys(rows[0]!) as (keyof R & string)[];
  const per = Math.floor(MAX_VARIABLES / columns.length);
  for (let i = 0; i < rows.length; i += per) {
    const chunk = rows.slice(i, i + per);
    const { shared, values } = boundValues(chunk, columns);
    const query = CompiledQuery.raw(
      insertText(table, columns, shared, chunk.length, tail),
      values,
    );
    await db.executeQuery(
      options.announce ? announceJobInsert(query, options.announce) : query,
    );
  }
}

const conditionalTexts = new Map<string, string>();

/**
 * insertRows() of rows each written only where `condition` holds for its
 * `key` (SQL naming the key `v.k`): `with v(k, cols) as (values ...) insert
 * into t (cols) select cols from v where condition`. A write batch
 * (src/db/atomic.ts, planned writes) cannot let one statement's answer
 * decide the next: an insert that depends on a row's state says so here
 * (`exists (select 1 from t where id = v.k and status = 'pending')`), and
 * runs after the statements whose effect it must see. Columns as insertRows().
 */
export async function insertRowsWhere<R extends object>(
  db: Executor,
  table: keyof Database,
  entries: ReadonlyArray<{ key: unknown; row: R }>,
  condition: string,
  options: { onConflictDoNothing?: boolean; announce?: Set<number> } = {},
): Promise<void> {
  if (entries.length === 0) return;
  const tail = options.onConflictDoNothing ? " on conflict do nothing" : "";
  const columns = Object.keys(entries[0]!.row) as (keyof R & string)[];
  const per = Math.floor(MAX_VARIABLES / (columns.length + 1));
  for (let i = 0; i < entries.length; i += per) {
    const chunk = entries.slice(i, i + per);
    const query = CompiledQuery.raw(
      conditionalText(table, columns, chunk.length, condition, tail),
      chunk.flatMap((e) => [e.key, ...columns.map((c) => e.row[c])]),
    );
    await db.executeQuery(
      options.announce ? announceJobInsert(query, options.announce) : query,
    );
  }
}

/** The text of insertRowsWhere() for `n` rows, written once per shape. */
function conditionalText(
  table: string,
  columns: readonly string[],
  n: number,
  condition: string,
  tail: string,
): string {
  const key = `${table}(${columns.join(",")}):${n}:${condition}${tail}`;
  let text = conditionalTexts.get(key);
  if (!text) {
    const row = `(${Array(columns.length + 1).fill("?").join(", ")})`;
    const list = columns.join(", ");
    text = `with v(k, ${list}) as (values ${
      Array(n).fill(row).join(", ")
    }) insert into ${table} (${list}) select ${list} from v where ${condition}${tail}`;
    if (conditionalTexts.size >= TEXTS_KEPT) {
      conditionalTexts.delete(conditionalTexts.keys().next().value!);
    }
    conditionalTexts.set(key, text);
  }
  return text;
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

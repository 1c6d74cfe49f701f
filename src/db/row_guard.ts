/**
 * Guards of atomic units (src/db/atomic.ts expectRow) on rows as a unit's
 * reads saw them: when one changed before the batch, the unit reads again.
 */
import { CompiledQuery } from "kysely";

type Row = Record<string, unknown>;


/** `exists (...)` while `row` (by its `id`) is stored with these column values. */
function sameRow(table: string, row: Row, columns: readonly string[]) {
  return {
    text: `exists (select 1 from ${table} where id = ?${
      columns.map((c) => ` and ${c} is ?`).join("")
    })`,
    parameters: [row.id, ...columns.map((c) => row[c])],
  };
}

/**
 * A query that finds a row while `row` (by its `id`) is stored with the
 * values it has in `columns` (all its columns by default).
 */
export function rowUnchanged<R extends object>(
  table: string,
  row: R,
  columns: readonly (keyof R & string)[] = Object.keys(row) as (keyof R &
    string)[],
): CompiledQuery<unknown> {
  const same = sameRow(table, row as Row, columns);
  return CompiledQuery.raw(`select 1 where ${same.text}`, same.parameters);
}

/**
 * A query that finds a row while the rows of `table` whose `column` is one
 * of `values` are exactly `rows`, each stored as read (no row added,
 * removed or changed).
 */
export function rowsUnchanged(
  table: string,
  scope: { column: string; values: readonly unknown[] },
  rows: readonly object[],
): CompiledQuery<unknown> {
  const terms = [
    `(select count(*) from ${table} where ${scope.column} in (select value from json_each(?))) = ?`,
  ];
  const parameters: unknown[] = [JSON.stringify(scope.values), rows.length];
  for (const row of rows) {
    const same = sameRow(table, row as Row, Object.keys(row));
    terms.push(same.text);
    parameters.push(...same.parameters);
  }
  return CompiledQuery.raw(`select 1 where ${terms.join(" and ")}`, parameters);
}

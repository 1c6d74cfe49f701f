/**
 * Guards for planned writes (src/db/planned_writes.ts) that depend on rows
 * read first: each query finds a row only while what the reads saw still
 * holds, so `writes.expectRow(query)` fails the batch (and plans the unit
 * again) when another writer changed it in between.
 */
import { CompiledQuery, type RawBuilder, sql } from "kysely";

/** Finds the row only while every column in `row` still holds the value read (rows are their own version). */
export function sameRow(
  table: string,
  row: Record<string, unknown>,
): RawBuilder<unknown> {
  const columns = Object.entries(row).map(([column, value]) =>
    sql`${sql.ref(column)} is ${value}`
  );
  return sql`select 1 from ${sql.table(table)} where ${
    sql.join(columns, sql` and `)
  }`;
}

/** Finds a row only while `count` rows match `where` (a row added or removed since the read fails it). */
export function sameCount(
  table: string,
  where: Record<string, unknown>,
  count: number,
): RawBuilder<unknown> {
  const columns = Object.entries(where).map(([column, value]) =>
    sql`${sql.ref(column)} is ${value}`
  );
  return sql`select 1 where (select count(*) from ${sql.table(table)} where ${
    sql.join(columns, sql` and `)
  }) = ${count}`;
}

type Row = Record<string, unknown>;

/** `exists (...)` while `row` (by its `id`) is stored with these column values. */
function sameRowTerm(table: string, row: Row, columns: readonly string[]) {
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
  columns: readonly (keyof R & string)[] = Object.keys(row) as (
    & keyof R
    & string
  )[],
): CompiledQuery<unknown> {
  const same = sameRowTerm(table, row as Row, columns);
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
    const same = sameRowTerm(table, row as Row, Object.keys(row));
    terms.push(same.text);
    parameters.push(...same.parameters);
  }
  return CompiledQuery.raw(`select 1 where ${terms.join(" and ")}`, parameters);
}

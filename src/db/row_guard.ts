/**
 * Guards for planned writes (src/db/planned_writes.ts) that depend on rows
 * read first: each query finds a row only while what the reads saw still
 * holds, so `writes.expectRow(query)` fails the batch (and plans the unit
 * again) when another writer changed it in between.
 */
import { type RawBuilder, sql } from "kysely";

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

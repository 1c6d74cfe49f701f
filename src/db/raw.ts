// Fixed SQL texts on the hot paths, run without building a query object.
import { CompiledQuery, type QueryResult } from "kysely";
import type { Executor } from "./schema.ts";
import { directRunner } from "./sqlite_dialect.ts";

/**
 * `db.executeQuery(CompiledQuery.raw(sql, parameters))`, but on embedded
 * SQLite, where the statement may run straight on the connection (inside a
 * transaction it holds: every group-commit unit), it runs there at once: no
 * query object (a frozen node and a random query id), no pass through the
 * plugins, no promise. A send runs five of these; Kysely's way cost about
 * 1.5 us of JavaScript each over the statement itself. On libSQL, or when
 * the statement must wait for a transaction, it goes through Kysely as before.
 * Await the answer either way (order is then the order of the calls); run at
 * once, a failing statement throws at once.
 */
export function executeRaw<R>(
  db: Executor,
  sql: string,
  parameters: readonly unknown[],
): QueryResult<R> | Promise<QueryResult<R>> {
  const result = directRunner(db.getExecutor())?.runNow<R>(sql, parameters);
  if (result) return result;
  return db.executeQuery(
    CompiledQuery.raw(sql, [...parameters]) as CompiledQuery<R>,
  );
}

/** executeRaw() of a query compiled beforehand (db/prepared.ts). */
export function executeCompiled<R>(
  db: Executor,
  query: CompiledQuery<R>,
): QueryResult<R> | Promise<QueryResult<R>> {
  return executeRaw<R>(db, query.sql, query.parameters);
}

/**
 * Atomic writes without interactive transactions, for libSQL.
 *
 * An interactive transaction on a libSQL server spans several HTTP requests,
 * and a client that dies inside one (kill -9, a lost machine) stalls every
 * writer of every instance for 5 s (shared/reference/scale-out.md). So a
 * write that must be atomic is an AtomicUnit: its reads first (autocommit
 * reads), then its writes as one batch (client.batch "write": one request,
 * all or nothing), with guards in the batch that fail it when what the
 * reads saw changed meanwhile; the unit then reads again and retries.
 *
 * On embedded SQLite the same unit runs inside one transaction that took
 * the write lock at BEGIN (reads and writes see one state: no guard fails).
 */
import {
  type Compilable,
  CompiledQuery,
  type QueryResult,
  type RawBuilder,
} from "kysely";
import type { Db, Executor } from "./schema.ts";
import type { LibsqlAccess } from "./libsql_dialect.ts";
import { retryDelayMs } from "./write_slots.ts";

/** What a batch takes: a query builder, a raw `sql` template, or a compiled statement. */
export type Writable =
  | Compilable<unknown>
  | RawBuilder<unknown>
  | CompiledQuery<unknown>;

/** The statements of a unit's write phase, in order, with its guards. */
export class WriteBatch {
  readonly queries: CompiledQuery[] = [];
  readonly #db: Executor;

  /** `db` compiles raw `sql` templates (with the Db's plugins). */
  constructor(db: Executor) {
    this.#db = db;
  }

  /** Adds a statement; its answer's index (for the unit's finish). */
  add(query: Writable): number {
    this.queries.push(this.#compile(query));
    return this.queries.length - 1;
  }

  /** The batch fails as a conflict unless `query` finds a row (what the reads saw still holds). */
  expectRow(query: Writable): void {
    const q = this.#compile(query);
    this.queries.push(CompiledQuery.raw(
      `insert into batch_guard (ok) select 0 where not exists (${q.sql})`,
      [...q.parameters],
    ));
  }

  /** The batch fails as a conflict unless the statement just added changed exactly `n` rows. */
  expectChanges(n = 1): void {
    this.queries.push(CompiledQuery.raw(
      `insert into batch_guard (ok) select 0 where changes() <> ?`,
      [n],
    ));
  }

  #compile(query: Writable): CompiledQuery {
    if (typeof (query as CompiledQuery).sql === "string") {
      return query as CompiledQuery;
    }
    // A raw `sql` template compiles with an executor; a builder has its own
    // (and ignores the argument).
    return (query as { compile(db: Executor): CompiledQuery }).compile(
      this.#db,
    );
  }
}

/** A write that must be atomic: reads, then statements built from what they saw. */
export interface AtomicUnit<P, T> {
  /** Reads only (on libSQL they run outside any transaction). */
  read(db: Executor): Promise<P>;
  /** Adds the writes to `batch`; returns how to make the result from their answers. */
  write(plan: P, batch: WriteBatch): (answers: QueryResult<unknown>[]) => T;
}

/** A guard of the batch failed: what the unit read changed before its writes. */
export class WriteConflict extends Error {
  override readonly name = "WriteConflict";
}

/** Whether a batch failed on one of its guards (the batch_guard table's check). */
export function isGuardFailure(err: unknown): boolean {
  const text = `${(err as Error)?.message ?? ""} ${
    ((err as { cause?: Error })?.cause)?.message ?? ""
  }`;
  return /batch_conflict|batch_guard/.test(text);
}

/** Times a unit is read and written again after a conflict before it fails. */
export const MAX_CONFLICTS = 8;

export interface AtomicDeps {
  db: Db;
  engine: "sqlite" | "libsql";
  dbBatch: LibsqlAccess | undefined;
}

/**
 * Runs a unit atomically: on embedded SQLite inside one transaction; on
 * libSQL as reads, then one batch, read and written again (with a jittered
 * pause) when a guard finds what it read changed.
 */
export async function runAtomic<P, T>(
  deps: AtomicDeps,
  unit: AtomicUnit<P, T>,
): Promise<T> {
  if (deps.engine === "sqlite" || !deps.dbBatch?.batch) {
    // The transaction holds the write lock from BEGIN: what the reads saw
    // holds until the commit, so a guard that fails here always would.
    try {
      return await deps.db.transaction().execute((trx) => runIn(trx, unit));
    } catch (err) {
      if (!isGuardFailure(err)) throw err;
      throw new WriteConflict("Cannot write: a guard of the write failed", {
        cause: err,
      });
    }
  }
  for (let attempt = 0;; attempt++) {
    const plan = await unit.read(deps.db);
    const batch = new WriteBatch(deps.db);
    const finish = unit.write(plan, batch);
    try {
      return finish(await commitBatch(deps, batch.queries));
    } catch (err) {
      if (!isGuardFailure(err)) throw err;
      if (attempt + 1 >= MAX_CONFLICTS) {
        throw new WriteConflict(
          `Cannot write: what it read kept changing (${MAX_CONFLICTS} tries)`,
          { cause: err },
        );
      }
      await new Promise((r) => setTimeout(r, retryDelayMs(attempt)));
    }
  }
}

/** Runs a unit on an open transaction (embedded SQLite, a group commit's). */
export async function runIn<P, T>(
  trx: Executor,
  unit: AtomicUnit<P, T>,
): Promise<T> {
  const plan = await unit.read(trx);
  const batch = new WriteBatch(trx);
  const finish = unit.write(plan, batch);
  const answers: QueryResult<unknown>[] = [];
  for (const query of batch.queries) {
    answers.push(await trx.executeQuery(query));
  }
  return finish(answers);
}

/**
 * Sends statements to libSQL as one atomic batch, then gives each answer to
 * the Db's plugins as Kysely would have (the job-insert signal, the lookup
 * cache), since the batch does not go through Kysely.
 */
export async function commitBatch(
  deps: AtomicDeps,
  queries: readonly CompiledQuery[],
): Promise<QueryResult<unknown>[]> {
  if (queries.length === 0) return [];
  const answers = await deps.dbBatch!.batch!(queries);
  const plugins = deps.db.getExecutor().plugins;
  for (let i = 0; i < queries.length; i++) {
    let result = answers[i]!;
    for (const plugin of plugins) {
      result = await plugin.transformResult({
        queryId: queries[i]!.queryId,
        result: result as QueryResult<never>,
      });
    }
    answers[i] = result;
  }
  return answers;
}

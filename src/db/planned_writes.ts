/**
 * Atomic units (src/db/atomic.ts) written as one function: it reads, decides,
 * and records its writes with the repositories' own write functions.
 *
 * A unit's writes go in a batch after its reads, so a write can no longer
 * run where the reads decide it. Rather than a second, batch-shaped copy of
 * every repository write, the unit's plan calls the repositories with
 * `writes.db`: an executor that compiles each statement (with the Db's
 * plugins' query transforms, so the job-insert signal and the lookup cache
 * still know their statements) and keeps it instead of running it. The
 * write phase then adds the kept statements and guards to the batch, in
 * order. A read on `writes.db` throws: its answers are empty, and a plan
 * reads on the executor it is given. A statement's answer (RETURNING, rows
 * changed) is only known after the commit: `finish` gets them by handle.
 *
 * Guards (expectRow, expectChanges) check, in the batch, that what the
 * reads saw still holds. Inside a transaction (embedded SQLite: the group
 * commit's, which took the write lock at BEGIN) nothing can change between
 * the reads and the writes, so they are left out there and cost SQLite's
 * paths no statement.
 */
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  Kysely,
  type KyselyPlugin,
  type QueryResult,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import type { Database, Executor } from "./schema.ts";
import type { AtomicUnit, Writable, WriteBatch } from "./atomic.ts";
import { isReadOnlySql } from "./write_slots.ts";

type Op =
  | { kind: "add"; query: Writable }
  | { kind: "row"; query: Writable }
  | { kind: "changes"; n: number };

/** The answers of a committed unit's statements, by the handle add() gave. */
export interface Answers {
  of(handle: number): QueryResult<unknown>;
}

/** The writes a plan decided, in order, with their guards. */
export class PlannedWrites {
  /** Statements run on it are recorded (in order), not run; their answer is empty. */
  readonly db: Executor;
  readonly #ops: Op[] = [];
  readonly #guarded: boolean;
  #statements = 0;

  /** `reader`: the executor the plan reads on (its plugins compile the writes). */
  constructor(reader: Executor) {
    this.#guarded = !reader.isTransaction;
    this.db = recorder(reader, (query) => this.add(query));
  }

  /** Whether guards go in the batch (not inside a transaction: see the module). */
  get guarded(): boolean {
    return this.#guarded;
  }

  /** Records a statement; returns its handle (see Answers). */
  add(query: Writable): number {
    this.#ops.push({ kind: "add", query });
    return this.#statements++;
  }

  /** The handle of the statement recorded last (by `db`, say). */
  get last(): number {
    return this.#statements - 1;
  }

  /** The batch fails as a conflict (the unit is planned again) unless `query` finds a row. */
  expectRow(query: Writable): void {
    if (this.#guarded) this.#ops.push({ kind: "row", query });
  }

  /** The batch fails as a conflict unless the statement recorded last changed exactly `n` rows. */
  expectChanges(n = 1): void {
    if (this.#guarded) this.#ops.push({ kind: "changes", n });
  }

  /** Adds the statements and guards to `batch`; returns where each handle's answer is. */
  addTo(batch: WriteBatch): number[] {
    const at: number[] = [];
    for (const op of this.#ops) {
      if (op.kind === "add") at.push(batch.add(op.query));
      else if (op.kind === "row") batch.expectRow(op.query);
      else batch.expectChanges(op.n);
    }
    return at;
  }
}

/**
 * Reads, decides and records the writes (PlannedWrites); returns how to make
 * the result once they are committed.
 */
export type Plan<T> = (
  db: Executor,
  writes: PlannedWrites,
) => Promise<(answers: Answers) => T>;

/** The atomic unit of a plan: planned on every read, its recorded writes as its batch. */
export function plannedUnit<T>(
  plan: Plan<T>,
): AtomicUnit<{ writes: PlannedWrites; finish: (a: Answers) => T }, T> {
  return {
    read: async (db) => {
      const writes = new PlannedWrites(db);
      return { writes, finish: await plan(db, writes) };
    },
    write: ({ writes, finish }, batch) => {
      const at = writes.addTo(batch);
      return (answers) => finish({ of: (handle) => answers[at[handle]!]! });
    },
  };
}

const EMPTY: QueryResult<never> = { rows: [] };

/**
 * A Kysely whose statements go to `keep`: compiled with `reader`'s plugins
 * (their result transforms left for the commit, when the statements run).
 */
function recorder(
  reader: Executor,
  keep: (query: CompiledQuery) => void,
): Executor {
  const connection: DatabaseConnection = {
    executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
      if (isReadOnlySql(query.sql)) {
        throw new Error(
          `Cannot read in a unit's write phase (read on the unit's executor): ${
            query.sql.slice(0, 80)
          }`,
        );
      }
      keep(query);
      return Promise.resolve(EMPTY as QueryResult<R>);
    },
    streamQuery() {
      throw new Error("Cannot stream in a unit's write phase");
    },
  };
  const driver: Driver = {
    init: () => Promise.resolve(),
    acquireConnection: () => Promise.resolve(connection),
    beginTransaction: () =>
      Promise.reject(new Error("A unit's writes open no transaction")),
    commitTransaction: () => Promise.resolve(),
    rollbackTransaction: () => Promise.resolve(),
    releaseConnection: () => Promise.resolve(),
    destroy: () => Promise.resolve(),
  };
  const dialect: Dialect = {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => driver,
    createQueryCompiler: () => new SqliteQueryCompiler(),
    createIntrospector: (db) => new SqliteIntrospector(db),
  };
  return new Kysely<Database>({
    dialect,
    plugins: reader.getExecutor().plugins.map(queryOnly),
  });
}

/** A plugin's query transform only: its result transform runs at the commit. */
function queryOnly(plugin: KyselyPlugin): KyselyPlugin {
  return {
    transformQuery: (args) => plugin.transformQuery(args),
    transformResult: (args) => Promise.resolve(args.result),
  };
}

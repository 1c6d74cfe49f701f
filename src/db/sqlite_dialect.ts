// node:sqlite under Kysely: the adapter, the DirectExecutor and its raw path
// (raw.ts). Past 300 lines: the three share the connection and its
// statement cache, and the executor's rules are read in one place.
import { DatabaseSync, type StatementSync } from "node:sqlite";
import type {
  CompiledQuery,
  ConnectionProvider,
  DatabaseConnection,
  Kysely,
  KyselyPlugin,
  PluginTransformResultArgs,
  QueryExecutor,
  QueryResult,
  RootOperationNode,
  SqliteDatabase,
  SqliteStatement,
  UnknownRow,
} from "kysely";
import { ROWS_AS_ARRAYS } from "./row_shape.ts";

const CACHE_LIMIT = 512;

/** WAL pages (4 KB each) after which a commit checkpoints (see openSqliteFile). */
export const WAL_AUTOCHECKPOINT_PAGES = 10000;
/** The WAL file is truncated back to this size when it restarts after a checkpoint. */
export const WAL_SIZE_LIMIT_BYTES = 40 * 1024 * 1024;

/** The adapted connection, and whether a transaction is open on it. */
export interface NodeSqliteDatabase extends SqliteDatabase {
  /**
   * Kysely's driver has it open (set by the dialect, see database.ts):
   * statements outside a transaction may bypass the driver only then.
   */
  opened: boolean;
  /**
   * A BEGIN is waiting for another connection's write lock (database.ts):
   * the driver holds the connection, but no transaction is open yet.
   */
  beginning: boolean;
  readonly inTransaction: boolean;
  /**
   * Sets busy_timeout. An exec each time: SQLite applies this pragma when it
   * compiles the statement, so a prepared one would only apply once.
   */
  busyTimeout(ms: number): void;
}

/** Kysely's SqliteDialect expects better-sqlite3's shape; this adapts Deno's built-in node:sqlite to it. */
export function adaptNodeSqlite(db: DatabaseSync): NodeSqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    opened: false,
    beginning: false,
    get inTransaction() {
      return db.isTransaction;
    },
    close: () => db.close(),
    busyTimeout: (ms) => db.exec(`pragma busy_timeout = ${Math.trunc(ms)}`),
    prepare(sql: string): SqliteStatement {
      const hit = cache.get(sql);
      if (hit) return hit;
      const stmt = wrap(db.prepare(sql), sql.startsWith(ROWS_AS_ARRAYS));
      if (cache.size >= CACHE_LIMIT) {
        cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, stmt);
      return stmt;
    },
  };
}

type Param = null | number | bigint | string | Uint8Array;

function toParams(params: ReadonlyArray<unknown>): Param[] {
  return params.map((p) => {
    if (p === undefined || p === null) return null;
    if (typeof p === "boolean") return p ? 1 : 0;
    if (p instanceof Date) return p.toISOString();
    return p as Param;
  });
}

function wrap(stmt: StatementSync, arrays: boolean): SqliteStatement {
  // Deno's node:sqlite has it (as Node 24 does); its type declarations do not yet.
  if (arrays) {
    (stmt as StatementSync & { setReturnArrays(on: boolean): void })
      .setReturnArrays(true);
  }
  const reader = stmt.columns().length > 0;
  return {
    reader,
    all: (params) => stmt.all(...toParams(params)) as unknown[],
    run: (params) => {
      const r = stmt.run(...toParams(params));
      return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
    },
    iterate: (params) =>
      stmt.iterate(...toParams(params)) as IterableIterator<unknown>,
  };
}

/** What Kysely's SqliteConnection.executeQuery answers, without its promise. */
function execute<R>(
  db: SqliteDatabase,
  query: CompiledQuery<R>,
): QueryResult<R> {
  const stmt = db.prepare(query.sql);
  if (stmt.reader) return { rows: stmt.all(query.parameters) as R[] };
  const { changes, lastInsertRowid } = stmt.run(query.parameters);
  return {
    numAffectedRows: BigInt(changes),
    insertId: BigInt(lastInsertRowid),
    rows: [],
  };
}

/**
 * A plugin whose transformResult() does its work at once: the executor
 * calls this instead and awaits nothing (two plugins on every statement
 * otherwise cost two promises and two microtask turns each).
 */
export interface SyncResultPlugin extends KyselyPlugin {
  transformResultNow(args: PluginTransformResultArgs): QueryResult<UnknownRow>;
}

function isSyncResultPlugin(plugin: KyselyPlugin): plugin is SyncResultPlugin {
  return typeof (plugin as Partial<SyncResultPlugin>).transformResultNow ===
    "function";
}

/**
 * Kysely's executor, but a statement runs straight on its node:sqlite
 * statement when that is what Kysely would end up doing: on a connection
 * Kysely holds for the caller (a transaction: every group commit), or on
 * the root while no transaction is open. Kysely's own path goes through a
 * connection provider (the driver's mutex, or the held connection's queue)
 * and, in a transaction, an executor made per statement: about eight
 * promises for a statement that node:sqlite runs synchronously, 7-9 % of
 * the server's CPU under the send benchmark. A transaction's statements
 * are the only ones on the one connection: a root statement that finds a
 * transaction open, or a BEGIN waiting for another connection's lock, goes
 * through Kysely and waits for that transaction's end (run now, a write
 * would wait for the same lock inside SQLite's busy handler, blocking the
 * process); one that finds neither runs at once, as Kysely would after
 * taking the free mutex (node:sqlite runs it to its end before anything
 * else runs). Order within a transaction is the order of the calls either way.
 * Plugins still see every result.
 */
class DirectExecutor implements QueryExecutor {
  readonly #inner: QueryExecutor;
  readonly #db: NodeSqliteDatabase;
  readonly #held: boolean;
  #bound:
    | { provider: ConnectionProvider; executor: DirectExecutor }
    | undefined;

  constructor(inner: QueryExecutor, db: NodeSqliteDatabase, held: boolean) {
    this.#inner = inner;
    this.#db = db;
    this.#held = held;
  }

  get adapter() {
    return this.#inner.adapter;
  }
  get plugins(): ReadonlyArray<KyselyPlugin> {
    return this.#inner.plugins;
  }
  transformQuery<T extends RootOperationNode>(
    node: T,
    queryId: Parameters<QueryExecutor["transformQuery"]>[1],
  ): T {
    return this.#inner.transformQuery(node, queryId);
  }
  compileQuery<R>(
    node: RootOperationNode,
    queryId: Parameters<QueryExecutor["compileQuery"]>[1],
  ): CompiledQuery<R> {
    return this.#inner.compileQuery(node, queryId);
  }
  provideConnection<T>(
    consumer: (c: DatabaseConnection) => Promise<T>,
  ): Promise<T> {
    return this.#inner.provideConnection(consumer);
  }
  stream<R>(query: CompiledQuery<R>, chunkSize: number) {
    return this.#inner.stream(query, chunkSize);
  }

  async executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> {
    if (!this.#direct()) return await this.#inner.executeQuery(query);
    let result = execute(this.#db, query) as QueryResult<UnknownRow>;
    for (const plugin of this.#inner.plugins) {
      const args = { result, queryId: query.queryId };
      result = isSyncResultPlugin(plugin)
        ? plugin.transformResultNow(args)
        : await plugin.transformResult(args);
    }
    return result as QueryResult<R>;
  }

  /** Whether a statement may run now, straight on the connection (see the class). */
  #direct(): boolean {
    return this.#held ||
      (this.#db.opened && !this.#db.inTransaction && !this.#db.beginning);
  }

  /**
   * A raw statement (see executeRaw in raw.ts) run now when this executor
   * runs statements directly, else undefined. No plugin sees it: the
   * plugins act only on statements they transformed or that were announced
   * (LookupInvalidationHook, JobInsertHook), and a raw text is neither.
   */
  runNow<R>(
    sql: string,
    parameters: readonly unknown[],
  ): QueryResult<R> | undefined {
    // A held executor whose transaction ended goes through Kysely, which
    // refuses a statement on a committed or rolled back transaction.
    if (this.#held ? !this.#db.inTransaction : !this.#direct()) {
      return undefined;
    }
    return execute(this.#db, { sql, parameters } as CompiledQuery<R>);
  }

  /**
   * Kysely's transaction asks for an executor bound to itself before every
   * statement: one per transaction (the last one asked) serves them all.
   */
  withConnectionProvider(provider: ConnectionProvider): QueryExecutor {
    if (this.#bound?.provider !== provider) {
      this.#bound = {
        provider,
        executor: new DirectExecutor(
          this.#inner.withConnectionProvider(provider),
          this.#db,
          true,
        ),
      };
      boundTo.set(provider, this.#bound.executor);
    }
    return this.#bound.executor;
  }
  withPlugin(plugin: KyselyPlugin): QueryExecutor {
    return this.#derive(this.#inner.withPlugin(plugin));
  }
  withPlugins(plugins: ReadonlyArray<KyselyPlugin>): QueryExecutor {
    return this.#derive(this.#inner.withPlugins(plugins));
  }
  withPluginAtFront(plugin: KyselyPlugin): QueryExecutor {
    return this.#derive(this.#inner.withPluginAtFront(plugin));
  }
  withoutPlugins(): QueryExecutor {
    return this.#derive(this.#inner.withoutPlugins());
  }
  #derive(inner: QueryExecutor): QueryExecutor {
    return new DirectExecutor(inner, this.#db, this.#held);
  }
}

/**
 * The held executor made for each provider (withConnectionProvider): a
 * Transaction's own executor (what its getExecutor() answers) is Kysely's
 * wrapper, which Kysely passes as the provider of every statement.
 */
const boundTo = new WeakMap<object, DirectExecutor>();

/**
 * What runs a raw statement at once for `executor` (a Kysely's or a
 * Transaction's getExecutor()), if it is one of ours (see raw.ts).
 */
export function directRunner(
  executor: QueryExecutor,
): Pick<DirectExecutor, "runNow"> | undefined {
  if (executor instanceof DirectExecutor) return executor;
  return boundTo.get(executor) ??
    ((executor as Partial<DirectExecutor>).runNow
      ? executor as DirectExecutor
      : undefined);
}

/**
 * Makes `kysely` (opened on `db`) and everything derived from it (plugins,
 * transactions) run statements directly where it can (DirectExecutor).
 * Kysely builds its root executor itself, so the root's statements and
 * derivations are redirected to a twin of it without plugins (the root has
 * none).
 */
export function runStatementsDirectly<T>(
  kysely: Kysely<T>,
  db: NodeSqliteDatabase,
): void {
  const root = kysely.getExecutor();
  if (root.plugins.length > 0) throw new Error("Expected a root executor");
  const twin = new DirectExecutor(root.withoutPlugins(), db, false);
  Object.assign(root, {
    executeQuery: <R>(q: CompiledQuery<R>) => twin.executeQuery(q),
    runNow: <R>(sql: string, parameters: readonly unknown[]) =>
      twin.runNow<R>(sql, parameters),
    withConnectionProvider: (p: ConnectionProvider) =>
      twin.withConnectionProvider(p),
    withPlugin: (p: KyselyPlugin) => twin.withPlugin(p),
    withPlugins: (p: ReadonlyArray<KyselyPlugin>) => twin.withPlugins(p),
    withPluginAtFront: (p: KyselyPlugin) => twin.withPluginAtFront(p),
    withoutPlugins: () => twin.withoutPlugins(),
  });
}

/**
 * How long a statement waits for another connection's lock before "database
 * is locked". BEGIN waits as long, on a timer instead (database.ts).
 */
export const BUSY_TIMEOUT_MS = 10_000;

/** Opens a SQLite file with the pragmas every connection needs (busy_timeout first). */
export function openSqliteFile(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec(`pragma busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.exec("pragma journal_mode = wal");
  db.exec("pragma synchronous = normal");
  db.exec("pragma foreign_keys = on");
  db.exec("pragma temp_store = memory");
  // 8 MB of page cache (it fills as pages are read, up to this): enough for
  // the upper levels of every index and the hot leaves. SQLite's cache is a
  // second copy of what the OS page cache holds, and a miss costs a pread
  // from it; at -32000 a scan of a 69 MB table left the process 43 MB
  // larger, at -8000 18 MB (the rest is SQLite's own heap).
  db.exec("pragma cache_size = -8000");
  // Checkpoints: SQLite runs one inside the COMMIT that takes the WAL past
  // wal_autocheckpoint pages, synchronously, on the event loop (copying the
  // pages back and fsyncing). Every 10000 pages instead of 1000 (a WAL file
  // of up to 40 MB) makes them ten times rarer and less work in all: a page
  // written many times between two checkpoints (index and job pages) is
  // copied once. A WAL profiler since removed (commit 0beb335; send-shaped transactions, one
  // process): 123 MB fewer bytes written per 20,000 transactions (of about
  // 1.2 GB: the WAL frames are the same, the checkpoints' copies fewer),
  // commit wall time 20-60 % lower; CPU and the longest stall are within the
  // shared disk's noise. PASSIVE checkpoints from a Worker were no faster, added 4-10 MB
  // of RSS, and under steady writes never caught up (the WAL only restarts
  // once fully copied back) and held the checkpoint lock when the safety
  // net's ran, so the WAL reached 120 MB. After a checkpoint the WAL is
  // reused from its start; journal_size_limit truncates the file back to
  // 40 MB after a larger transaction. Durability is unchanged (WAL,
  // synchronous = normal: a committed transaction survives kill -9).
  // Under steady writes src/db/checkpointer.ts now copies the WAL back from
  // a thread every 50 ms and restarts it from 2,000 pages (the 40 MB copy
  // inside a COMMIT stalled the send benchmark's requests by 50-68 ms once a
  // second); this stays the safety net.
  db.exec(`pragma wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  db.exec(`pragma journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  return db;
}

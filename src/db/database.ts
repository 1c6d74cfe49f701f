import {
  type Driver,
  Kysely,
  SqliteAdapter,
  SqliteDialect,
  SqliteIntrospector,
  SqliteQueryCompiler,
} from "kysely";
import type { Database } from "./schema.ts";
import { isSqliteBusy } from "./busy.ts";
import {
  adaptNodeSqlite,
  BUSY_TIMEOUT_MS,
  type NodeSqliteDatabase,
  openSqliteFile,
  runStatementsDirectly,
} from "./sqlite_dialect.ts";
import { LazyDriver } from "./lazy_driver.ts";
import { Checkpointer } from "./checkpointer.ts";
import { WriteSlots } from "./write_slots.ts";
import type { LibsqlAccess } from "./libsql_dialect.ts";

export type Engine = "sqlite" | "libsql";

export interface OpenedDatabase {
  db: Kysely<Database>;
  engine: Engine;
  /** libSQL: the writes in flight (at most MAX_WRITES_IN_FLIGHT) and atomic batches. */
  libsql?: { slots: WriteSlots; access: LibsqlAccess };
  /** Embedded SQLite file: the background checkpointer, once started. */
  checkpointer?: () => Checkpointer | undefined;
  /**
   * Embedded SQLite: the connection itself, for a read that must not wait
   * for an open transaction's commit (the lookup cache's epoch).
   */
  connection?: NodeSqliteDatabase;
}

/** Commits on an embedded SQLite file after which its checkpoints move to a thread. */
export const BACKGROUND_CHECKPOINT_AFTER_COMMITS = 1000;
/**
 * WAL pages after which they move there sooner: under the send load 1,000
 * commits took 10 s, and the WAL reached the 10,000-page checkpoint inside a
 * COMMIT (50-60 ms each) five times before the thread started.
 */
export const BACKGROUND_CHECKPOINT_AFTER_WAL_PAGES = 1000;

/** Pages the WAL file has held (4 KB pages, 24-byte frame headers, 32-byte header). */
function walPages(path: string): number {
  try {
    return (Deno.statSync(`${path}-wal`).size - 32) / (4096 + 24);
  } catch {
    return 0;
  }
}

/**
 * Opens `file:` URLs on embedded SQLite and `libsql:`/`http(s):`/`ws(s):` URLs
 * on a libSQL server. The libSQL client is imported on the first query, so a
 * server on a file never loads it; a URL the client refuses fails that query
 * (the migration at start) with the client's own message.
 */
export function openDatabase(
  url: string,
  options: {
    authToken?: string | undefined;
    /** Commits before the checkpointer thread starts (file databases). */
    checkpointAfterCommits?: number;
    /** WAL pages after which it starts all the same. */
    checkpointAfterWalPages?: number;
  } = {},
): OpenedDatabase {
  if (url.startsWith("file:") || url === ":memory:") {
    const path = url === ":memory:" ? ":memory:" : url.slice("file:".length);
    // Deno's own call: node:fs would load its polyfill at start for this alone.
    if (path !== ":memory:") {
      Deno.mkdirSync(parentDir(path), { recursive: true });
    }
    const database = adaptNodeSqlite(openSqliteFile(path));
    const dialect = new ImmediateSqliteDialect({ database });
    if (path !== ":memory:") {
      dialect.checkpointFile = path;
      dialect.checkpointAfterCommits = options.checkpointAfterCommits ??
        BACKGROUND_CHECKPOINT_AFTER_COMMITS;
      dialect.checkpointAfterWalPages = options.checkpointAfterWalPages ??
        BACKGROUND_CHECKPOINT_AFTER_WAL_PAGES;
    }
    const db = new Kysely<Database>({ dialect });
    runStatementsDirectly(db, database);
    return {
      db,
      engine: "sqlite",
      checkpointer: () => dialect.checkpointer,
      connection: database,
    };
  }
  if (/^(libsql|https?|wss?):\/\//.test(url)) {
    const config = {
      url,
      ...(options.authToken ? { authToken: options.authToken } : {}),
    };
    const libsql = { slots: new WriteSlots(), access: {} as LibsqlAccess };
    const db = new Kysely<Database>({
      dialect: {
        createAdapter: () => new SqliteAdapter(),
        createDriver: () =>
          new LazyDriver(async () => {
            const { WellFormedLibsqlDialect } = await import(
              "./libsql_dialect.ts"
            );
            return new WellFormedLibsqlDialect(config, libsql).createDriver();
          }),
        createIntrospector: (db) => new SqliteIntrospector(db),
        createQueryCompiler: () => new SqliteQueryCompiler(),
      },
    });
    return { db, engine: "libsql", libsql };
  }
  throw new Error(
    `Cannot open database "${url}": use a file:, libsql:, http(s): or ws(s): URL`,
  );
}

const BEGIN_IMMEDIATE = "begin immediate";

/**
 * How often a BEGIN that found the write lock taken tries again. Another
 * writer (the checkpointer thread's RESTART, which copies the last frames
 * and fsyncs under the lock; the admin CLI; a second server) holds it for
 * a few to a few tens of milliseconds. SQLite's busy handler would wait
 * inside the call, blocking the event loop, and in growing steps (1, 2, 5,
 * 10, 15, 20, 25 ms): under the send benchmark the main thread slept there
 * 26 times in 11 s, 33-53 ms each (strace), with no request read, answered
 * or joined to the next group meanwhile. So BEGIN runs with busy_timeout 0
 * and waits on a timer, the event loop running; every other statement keeps
 * the connection's busy_timeout.
 */
const BUSY_RETRY_MS = 1;

/**
 * SQLite whose transactions take the write lock at BEGIN. Every transaction
 * here writes; a deferred one first reads, and if another process (the admin
 * CLI, a second server) commits before its first write, that write fails at
 * once with "database is locked" (SQLITE_BUSY_SNAPSHOT: busy_timeout cannot
 * help), failing a whole group commit. Taken at BEGIN, the lock waits for
 * the other writer instead (on a timer, see BUSY_RETRY_MS), as libSQL's
 * write transactions do.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  readonly #database: NodeSqliteDatabase;
  /** The file whose checkpoints a thread takes over (see Checkpointer). */
  checkpointFile: string | undefined;
  checkpointAfterCommits = Infinity;
  checkpointAfterWalPages = Infinity;
  checkpointer: Checkpointer | undefined;
  #commits = 0;

  constructor(config: { database: NodeSqliteDatabase }) {
    super(config);
    this.#database = config.database;
  }

  override createDriver(): Driver {
    const driver = super.createDriver();
    // Statements bypass the driver only while it has the connection open
    // (runStatementsDirectly): before, Kysely opens it; after, it refuses.
    const init = driver.init.bind(driver);
    driver.init = async () => {
      await init();
      this.#database.opened = true;
    };
    const database = this.#database;
    // Setting busy_timeout to 0, BEGIN and restoring it are one synchronous
    // step: no other statement can run with busy_timeout 0.
    const begin = () => {
      database.busyTimeout(0);
      try {
        database.prepare(BEGIN_IMMEDIATE).run([]);
      } finally {
        database.busyTimeout(BUSY_TIMEOUT_MS);
      }
    };
    driver.beginTransaction = async () => {
      const deadline = performance.now() + BUSY_TIMEOUT_MS;
      // While it waits, root statements wait for this transaction's end
      // instead of running now (see DirectExecutor).
      database.beginning = true;
      try {
        for (;;) {
          try {
            return begin();
          } catch (err) {
            if (!isSqliteBusy(err) || performance.now() >= deadline) throw err;
          }
          await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
        }
      } finally {
        database.beginning = false;
      }
    };
    // The thread starts once the database is written steadily, not at start:
    // an idle server or a short test pays neither its start nor its memory.
    // Until then each commit also stats the WAL file (a few microseconds).
    const commit = driver.commitTransaction.bind(driver);
    driver.commitTransaction = async (connection) => {
      await commit(connection);
      if (this.checkpointer || !this.checkpointFile) return;
      if (
        ++this.#commits >= this.checkpointAfterCommits ||
        walPages(this.checkpointFile) >= this.checkpointAfterWalPages
      ) {
        this.checkpointer = new Checkpointer(this.checkpointFile);
      }
    };
    const destroy = driver.destroy.bind(driver);
    driver.destroy = async () => {
      this.#database.opened = false;
      await this.checkpointer?.stop();
      await destroy();
    };
    return driver;
  }
}

/**
 * The directory part of a file path ("." for a bare name), as node:path's
 * dirname gives it for the paths a DATABASE_URL holds (a trailing "/" is
 * not one); importing node:path cost 4-9 ms at start for this one call.
 * Windows paths (drive letters, UNC shares) go to node:path itself.
 */
export function parentDir(path: string): string {
  if (Deno.build.os === "windows") {
    return (process.getBuiltinModule("node:path") as typeof import("node:path"))
      .dirname(path);
  }
  const at = path.lastIndexOf("/");
  return at < 0 ? "." : at === 0 ? "/" : path.slice(0, at);
}

import { DatabaseSync, type StatementSync } from "node:sqlite";
import type { SqliteDatabase, SqliteStatement } from "kysely";

const CACHE_LIMIT = 512;

/** Kysely's SqliteDialect expects better-sqlite3's shape; this adapts Deno's built-in node:sqlite to it. */
export function adaptNodeSqlite(db: DatabaseSync): SqliteDatabase {
  const cache = new Map<string, SqliteStatement>();
  return {
    close: () => db.close(),
    prepare(sql: string): SqliteStatement {
      const hit = cache.get(sql);
      if (hit) return hit;
      const stmt = wrap(db.prepare(sql));
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

function wrap(stmt: StatementSync): SqliteStatement {
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

/** Opens a SQLite file with the pragmas every connection needs (busy_timeout first). */
export function openSqliteFile(path: string): DatabaseSync {
  const db = new DatabaseSync(path);
  db.exec("pragma busy_timeout = 10000");
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
  return db;
}

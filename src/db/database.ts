import { Kysely, SqliteDialect } from "kysely";
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import type { Database } from "./schema.ts";
import { adaptNodeSqlite, openSqliteFile } from "./sqlite_dialect.ts";
import { WellFormedLibsqlDialect } from "./libsql_dialect.ts";

export type Engine = "sqlite" | "libsql";

export interface OpenedDatabase {
  db: Kysely<Database>;
  engine: Engine;
}

/** Opens `file:` URLs on embedded SQLite and `libsql:`/`http(s):`/`ws(s):` URLs on a libSQL server. */
export function openDatabase(
  url: string,
  options: { authToken?: string | undefined } = {},
): OpenedDatabase {
  if (url.startsWith("file:") || url === ":memory:") {
    const path = url === ":memory:" ? ":memory:" : url.slice("file:".length);
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    const raw = openSqliteFile(path);
    const db = new Kysely<Database>({
      dialect: new SqliteDialect({ database: adaptNodeSqlite(raw) }),
    });
    return { db, engine: "sqlite" };
  }
  if (/^(libsql|https?|wss?):\/\//.test(url)) {
    const db = new Kysely<Database>({
      dialect: new WellFormedLibsqlDialect({
        url,
        ...(options.authToken ? { authToken: options.authToken } : {}),
      }),
    });
    return { db, engine: "libsql" };
  }
  throw new Error(
    `Cannot open database "${url}": use a file:, libsql:, http(s): or ws(s): URL`,
  );
}

// Query plans of the statements Kysely issues: a Kysely over the harness's
// SQLite file that records each query, and EXPLAIN QUERY PLAN of the first
// statement a call issues.
import { Kysely, SqliteDialect } from "kysely";
import type { Database } from "../../src/db/schema.ts";
import {
  adaptNodeSqlite,
  openSqliteFile,
} from "../../src/db/sqlite_dialect.ts";

export interface PlanProbe extends AsyncDisposable {
  db: Kysely<Database>;
  /** The plan (one line per step) of the first statement `run` issues. */
  planOf(run: (db: Kysely<Database>) => Promise<unknown>): Promise<string>;
  /** The plans of every statement `run` issues, in order. */
  plansOf(run: (db: Kysely<Database>) => Promise<unknown>): Promise<string[]>;
  /** Every statement `run` issues, in order, with its plan. */
  statementsOf(
    run: (db: Kysely<Database>) => Promise<unknown>,
  ): Promise<Issued[]>;
}

export interface Issued {
  sql: string;
  parameters: readonly unknown[];
  plan: string;
}

/** Opens `path` a second time with a recording Kysely. */
export function planProbe(path: string): PlanProbe {
  const raw = openSqliteFile(path);
  const statements: { sql: string; parameters: readonly unknown[] }[] = [];
  const db = new Kysely<Database>({
    dialect: new SqliteDialect({ database: adaptNodeSqlite(raw) }),
    log: (event) => void statements.push(event.query),
  });
  const explain = (issued: (typeof statements)[number]) =>
    raw.prepare(`explain query plan ${issued.sql}`)
      .all(...(issued.parameters as (string | number)[]))
      .map((r) => String(r.detail)).join("\n");
  const statementsOf = async (
    run: (db: Kysely<Database>) => Promise<unknown>,
  ): Promise<Issued[]> => {
    statements.length = 0;
    await run(db);
    if (statements.length === 0) {
      throw new Error("The call issued no statement");
    }
    return statements.map((s) => ({ ...s, plan: explain(s) }));
  };
  const plansOf = async (run: (db: Kysely<Database>) => Promise<unknown>) =>
    (await statementsOf(run)).map((s) => s.plan);
  return {
    db,
    plansOf,
    statementsOf,
    async planOf(run) {
      return (await plansOf(run))[0]!;
    },
    async [Symbol.asyncDispose]() {
      await db.destroy();
    },
  };
}

import { LibsqlDialect, type LibsqlDriver } from "@libsql/kysely-libsql";
import type {
  CompiledQuery,
  DatabaseConnection,
  Driver,
  QueryResult,
} from "kysely";
import { isReadOnlySql, withRetries, type WriteSlots } from "./write_slots.ts";

/** What the program reaches of the libSQL client besides Kysely: atomic batches. */
export interface LibsqlAccess {
  /** Set when the driver is made (on the first query). */
  batch?: (
    queries: readonly CompiledQuery[],
  ) => Promise<QueryResult<unknown>[]>;
  /**
   * Interactive transactions refused (tests set it: no request or worker
   * path may use one on libSQL, see src/db/atomic.ts), but while `allowed`
   * is above 0 (the migrations, which run at start).
   */
  forbidTransactions?: boolean;
  allowed?: number;
}

/**
 * libSQL with node:sqlite's handling of ill-formed text, a cap on writes in
 * flight, and retries of a busy server.
 *
 * Text: node:sqlite writes a lone surrogate (valid in a JS string and in
 * JSON, `"\ud800"`) as U+FFFD; the libSQL client copies it into its own JSON
 * request as is, and sqld rejects the whole statement. Text parameters are
 * made well formed first, so both engines store the same thing.
 *
 * Writes: every write outside a transaction, every batch and every
 * transaction (BEGIN to its end) holds one of `slots` (see write_slots.ts:
 * sqld wedges with too many writes in flight). Reads take none.
 *
 * Retries: an autocommit statement, a batch or a BEGIN that sqld refused as
 * busy, timed out or over its request limit wrote nothing, and is tried
 * again after a jittered pause; a statement inside a transaction is not
 * (the transaction fails as a whole).
 */
export class WellFormedLibsqlDialect extends LibsqlDialect {
  readonly #slots: WriteSlots;
  readonly #access: LibsqlAccess;

  constructor(
    config: { url: string; authToken?: string },
    options: { slots: WriteSlots; access: LibsqlAccess },
  ) {
    super(config);
    this.#slots = options.slots;
    this.#access = options.access;
  }

  override createDriver(): Driver {
    const libsqlDriver = super.createDriver() as LibsqlDriver;
    const client = libsqlDriver.client;
    // Its methods, replaced below, as the Driver interface types them.
    const driver = libsqlDriver as unknown as Driver;
    const slots = this.#slots;
    const retry = <T>(fn: () => Promise<T>) =>
      withRetries(fn, () => slots.noteRetry());
    /** The slot of each connection inside a transaction. */
    const inTransaction = new WeakMap<DatabaseConnection, () => void>();
    const acquire = driver.acquireConnection.bind(driver);
    driver.acquireConnection = async () => {
      const connection = wellFormed(await acquire());
      const execute = connection.executeQuery.bind(connection);
      connection.executeQuery = <R>(query: CompiledQuery) => {
        if (inTransaction.has(connection)) return execute<R>(query);
        if (isReadOnlySql(query.sql)) return retry(() => execute<R>(query));
        return slots.run(() => retry(() => execute<R>(query)));
      };
      return connection;
    };
    const begin = driver.beginTransaction.bind(driver);
    const access = this.#access;
    driver.beginTransaction = async (connection, settings) => {
      if (access.forbidTransactions && !access.allowed) {
        throw new Error(
          "Interactive transactions are not used on libSQL: write an atomic unit (src/db/atomic.ts)",
        );
      }
      const release = await slots.acquire();
      try {
        await retry(() => begin(connection, settings));
      } catch (err) {
        release();
        throw err;
      }
      inTransaction.set(connection, release);
    };
    const end =
      (fn: (c: DatabaseConnection) => Promise<void>) =>
      async (connection: DatabaseConnection) => {
        try {
          await fn(connection);
        } finally {
          inTransaction.get(connection)?.();
          inTransaction.delete(connection);
        }
      };
    driver.commitTransaction = end(driver.commitTransaction.bind(driver));
    driver.rollbackTransaction = end(driver.rollbackTransaction.bind(driver));
    this.#access.batch = (queries) =>
      slots.run(() =>
        retry(async () => {
          const results = await client.batch(
            queries.map((q) => ({
              sql: q.sql,
              args: q.parameters.map(toWellFormed) as never[],
            })),
            "write",
          );
          return results.map((r) => ({
            rows: r.rows as unknown[],
            numAffectedRows: BigInt(r.rowsAffected),
            ...(r.lastInsertRowid !== undefined
              ? { insertId: BigInt(r.lastInsertRowid) }
              : {}),
          }));
        })
      );
    return driver;
  }
}

function wellFormed(connection: DatabaseConnection): DatabaseConnection {
  const execute = connection.executeQuery.bind(connection);
  connection.executeQuery = (query: CompiledQuery) =>
    execute(
      query.parameters.some(isIllFormed)
        ? { ...query, parameters: query.parameters.map(toWellFormed) }
        : query,
    );
  return connection;
}

function isIllFormed(value: unknown): boolean {
  return typeof value === "string" && !value.isWellFormed();
}

function toWellFormed(value: unknown): unknown {
  return typeof value === "string" ? value.toWellFormed() : value;
}

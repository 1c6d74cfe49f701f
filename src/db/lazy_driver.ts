import type {
  DatabaseConnection,
  Driver,
  QueryCompiler,
  TransactionSettings,
} from "kysely";

/**
 * A Kysely driver made on first use: `init` awaits `load` (a dynamic import
 * and the real driver's construction) and every other call goes to the
 * driver it returned. Kysely calls `init` before anything else, so an engine
 * a configuration does not use is never imported, and a load that fails
 * (a malformed URL) fails the first query with the loader's own error.
 */
export class LazyDriver implements Driver {
  readonly #load: () => Promise<Driver>;
  #driver: Driver | undefined;

  constructor(load: () => Promise<Driver>) {
    this.#load = load;
  }

  async init(): Promise<void> {
    if (this.#driver) return;
    const driver = await this.#load();
    await driver.init();
    this.#driver = driver;
  }

  get #ready(): Driver {
    if (!this.#driver) throw new Error("The database driver is not loaded");
    return this.#driver;
  }

  acquireConnection(): Promise<DatabaseConnection> {
    return this.#ready.acquireConnection();
  }

  beginTransaction(
    connection: DatabaseConnection,
    settings: TransactionSettings,
  ): Promise<void> {
    return this.#ready.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#ready.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.#ready.rollbackTransaction(connection);
  }

  savepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler["compileQuery"],
  ): Promise<void> {
    return this.#optional("savepoint")(connection, name, compile);
  }

  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler["compileQuery"],
  ): Promise<void> {
    return this.#optional("rollbackToSavepoint")(connection, name, compile);
  }

  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler["compileQuery"],
  ): Promise<void> {
    return this.#optional("releaseSavepoint")(connection, name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.#ready.releaseConnection(connection);
  }

  async destroy(): Promise<void> {
    await this.#driver?.destroy();
  }

  /** A savepoint method of the real driver; Kysely's own error when it has none. */
  #optional(
    method: "savepoint" | "rollbackToSavepoint" | "releaseSavepoint",
  ): NonNullable<Driver[typeof method]> {
    const driver = this.#ready;
    const fn = driver[method];
    if (!fn) {
      throw new Error(
        `The \`${method}\` method is not supported by this driver`,
      );
    }
    return fn.bind(driver);
  }
}

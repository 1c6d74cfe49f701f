import { LibsqlDialect } from "@libsql/kysely-libsql";
import type { CompiledQuery, DatabaseConnection, Driver } from "kysely";

/**
 * libSQL with node:sqlite's handling of ill-formed text. node:sqlite writes a
 * lone surrogate (valid in a JS string and in JSON, `"\ud800"`) as U+FFFD;
 * the libSQL client copies it into its own JSON request as is, and sqld
 * rejects the whole statement. Text parameters are made well formed first,
 * so both engines store the same thing and neither fails.
 */
export class WellFormedLibsqlDialect extends LibsqlDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    const acquire = driver.acquireConnection.bind(driver);
    driver.acquireConnection = async () => wellFormed(await acquire());
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

import type { Config } from "./config.ts";
import { type Clock, systemClock } from "./clock.ts";
import { createLogger, type Logger } from "./log.ts";
import { SecretBox } from "./crypto.ts";
import { type Engine, openDatabase } from "./db/database.ts";
import type { Db } from "./db/schema.ts";

/** Everything the program is built from, made once in main.ts (tests build it the same way). */
export interface Container extends AsyncDisposable {
  readonly config: Config;
  readonly db: Db;
  readonly engine: Engine;
  readonly clock: Clock;
  readonly log: Logger;
  readonly secrets: SecretBox;
}

export interface ContainerOverrides {
  clock?: Clock;
  log?: Logger;
}

/** Builds the container; the database is opened here and closed on dispose. */
export function createContainer(
  config: Config,
  overrides: ContainerOverrides = {},
): Container {
  if (!config.secretKey) {
    throw new Error(
      "Cannot start: SECRET_KEY is not set (32+ characters; it encrypts stored secrets and signs media URLs)",
    );
  }
  const { db, engine } = openDatabase(config.databaseUrl, {
    authToken: config.databaseAuthToken,
  });
  const log = overrides.log ?? createLogger(config.logLevel);
  return {
    config,
    db,
    engine,
    clock: overrides.clock ?? systemClock,
    log,
    secrets: new SecretBox(config.secretKey),
    async [Symbol.asyncDispose]() {
      await db.destroy();
    },
  };
}

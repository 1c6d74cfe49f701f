import type { Config } from "./config.ts";
import { type Clock, systemClock } from "./clock.ts";
import { createLogger, type Logger } from "./log.ts";
import { SecretBox } from "./crypto.ts";
import { type Engine, openDatabase } from "./db/database.ts";
import type { Db } from "./db/schema.ts";
import { JobSignal } from "./jobs/signal.ts";
import type { GraphApi } from "./upstream/graph_api.ts";
import { createGraphClient } from "./upstream/graph_client.ts";
import { SendGovernor } from "./upstream/send_governor.ts";
import type { BlobStore } from "./storage/blob_store.ts";
import { createBlobStore } from "./storage/create_blob_store.ts";

/** Everything the program is built from, made once in main.ts (tests build it the same way). */
export interface Container extends AsyncDisposable {
  readonly config: Config;
  readonly db: Db;
  readonly engine: Engine;
  readonly clock: Clock;
  readonly log: Logger;
  readonly secrets: SecretBox;
  readonly graph: GraphApi;
  readonly blobs: BlobStore;
  readonly governor: SendGovernor;
  /** Writers call jobs.notify() after committing jobs; the worker pool listens. */
  readonly jobs: JobSignal;
}

export interface ContainerOverrides {
  clock?: Clock;
  log?: Logger;
  graph?: GraphApi;
  blobs?: BlobStore;
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
    graph: overrides.graph ??
      createGraphClient({ baseUrl: config.metaGraphUrl }),
    blobs: overrides.blobs ?? createBlobStore(config),
    governor: new SendGovernor({
      defaultRatePerSecond: config.sendRatePerSecond,
    }),
    jobs: new JobSignal(),
    async [Symbol.asyncDispose]() {
      await db.destroy();
    },
  };
}

import type { Config } from "./config.ts";
import { type Clock, systemClock } from "./clock.ts";
import { createLogger, type Logger } from "./log.ts";
import { SecretBox } from "./crypto.ts";
import { type Engine, openDatabase } from "./db/database.ts";
import type { WriteSlots } from "./db/write_slots.ts";
import type { LibsqlAccess } from "./db/libsql_dialect.ts";
import type { Db } from "./db/schema.ts";
import { JobSignal } from "./jobs/signal.ts";
import type { GraphApi } from "./upstream/graph_api.ts";
import { createGraphClient } from "./upstream/graph_client.ts";
import { SendGovernor } from "./upstream/send_governor.ts";
import { DbSlots } from "./domain/channels/send_slot_service.ts";
import {
  createMetaManagementClient,
  type MetaManagementApi,
} from "./upstream/meta_management.ts";
import type { BlobStore } from "./storage/blob_store.ts";
import { JobInsertHook } from "./db/job_insert_hook.ts";
import { GroupCommit } from "./db/group_commit.ts";
import {
  LookupCache,
  LookupInvalidationHook,
  sqliteEpoch,
} from "./db/lookup_cache.ts";
import { EgressClient } from "./egress/http_client.ts";
import type { Resolver } from "./egress/resolver.ts";
import { type AppMetrics, createAppMetrics } from "./metrics/app_metrics.ts";
import { createBlobStore } from "./storage/create_blob_store.ts";
import { ProgramParts } from "./program_parts.ts";
import { Draining } from "./draining.ts";
import { OpenStreams } from "./streams.ts";

/** Everything the program is built from, made once in main.ts (tests build it the same way). */
export interface Container extends AsyncDisposable {
  readonly config: Config;
  readonly db: Db;
  readonly engine: Engine;
  /** libSQL: the writes this process has in flight (at most 2; src/db/write_slots.ts). */
  readonly dbWrites: WriteSlots | undefined;
  /** libSQL: atomic multi-statement writes in one request (client.batch "write"). */
  readonly dbBatch: LibsqlAccess | undefined;
  readonly clock: Clock;
  readonly log: Logger;
  readonly secrets: SecretBox;
  readonly graph: GraphApi;
  /** The WhatsApp management calls: templates, numbers, subscriptions, tokens. */
  readonly meta: MetaManagementApi;
  readonly blobs: BlobStore;
  readonly governor: SendGovernor;
  /** Fires after every insert into the job table; the worker pools listen. */
  readonly jobs: JobSignal;
  /** Outbound HTTP to user-supplied URLs (webhooks), checked on the address dialled. */
  readonly egress: EgressClient;
  /** Resolves webhook host names (the egress client's, and the create-time check's). */
  readonly resolver: Resolver | undefined;
  readonly metrics: AppMetrics;
  /** Gathers small writes that arrive together into one commit. */
  readonly commits: GroupCommit;
  /** Principals, channels and templates of the hot path (src/db/lookup_cache.ts). */
  readonly lookups: LookupCache;
  /** Loads the parts imported on first use; knows whether one failed (src/program_parts.ts). */
  readonly parts: ProgramParts;
  /** Set when the process starts shutting down: /readyz answers 503 from then on. */
  readonly draining: Draining;
  /** Responses that stay open (panel event streams), closed first at shutdown. */
  readonly streams: OpenStreams;
}

export interface ContainerOverrides {
  clock?: Clock;
  log?: Logger;
  graph?: GraphApi;
  meta?: MetaManagementApi;
  blobs?: BlobStore;
  /** Host name resolution for webhooks (tests answer with their own). */
  resolver?: Resolver;
  /** Extra trust anchors for webhook TLS (tests' own CA). */
  egressCaCerts?: string[];
  /** Admin commands: start without SECRET_KEY; only sealing or opening a secret then fails. */
  secretKeyOptional?: boolean;
}

const MISSING_SECRET_KEY =
  "SECRET_KEY is not set (32+ characters; it encrypts stored secrets and signs media URLs)";

/** Builds the container; the database is opened here and closed on dispose. */
export function createContainer(
  config: Config,
  overrides: ContainerOverrides = {},
): Container {
  if (!config.secretKey && !overrides.secretKeyOptional) {
    throw new Error(`Cannot start: ${MISSING_SECRET_KEY}`);
  }
  const opened = openDatabase(config.databaseUrl, {
    authToken: config.databaseAuthToken,
  });
  const jobs = new JobSignal();
  // Embedded SQLite reads the epoch on every request (a local point read).
  const clock = overrides.clock ?? systemClock;
  const lookups = new LookupCache(opened.db, {
    ttlMs: opened.engine === "sqlite" ? 0 : config.cacheTtlMs,
    // The program's clock, so a test moves CACHE_TTL_MS along with the rest.
    now: () => clock.now().getTime(),
    direct: opened.connection && sqliteEpoch(opened.connection),
  });
  const db = opened.db.withPlugin(
    new JobInsertHook((lanes) => jobs.notify(lanes)),
  ).withPlugin(new LookupInvalidationHook(lookups));
  const log = overrides.log ?? createLogger(config.logLevel);
  const egress = new EgressClient({
    allowPrivate: config.webhookAllowPrivateNetworks,
    allowHttp: config.webhookAllowHttp,
    ...(overrides.resolver ? { resolver: overrides.resolver } : {}),
    ...(overrides.egressCaCerts ? { caCerts: overrides.egressCaCerts } : {}),
  });
  // Inbound media downloads: only MEDIA_DOWNLOAD_HOSTS, only checked addresses.
  const mediaEgress = new EgressClient({
    allowPrivate: config.mediaDownloadAllowPrivate,
    allowHttp: config.mediaDownloadAllowPrivate,
    ...(overrides.resolver ? { resolver: overrides.resolver } : {}),
  });
  const parts = new ProgramParts(log);
  return {
    config,
    db,
    engine: opened.engine,
    dbWrites: opened.libsql?.slots,
    dbBatch: opened.libsql?.access,
    clock,
    log,
    secrets: new SecretBox(config.secretKey, MISSING_SECRET_KEY),
    graph: overrides.graph ??
      createGraphClient({
        baseUrl: config.metaGraphUrl,
        media: { egress: mediaEgress, hosts: config.mediaDownloadHosts },
      }),
    meta: overrides.meta ??
      createMetaManagementClient({ baseUrl: config.metaGraphUrl }),
    blobs: overrides.blobs ?? createBlobStore(config, { parts }),
    governor: new SendGovernor({
      defaultRatePerSecond: config.sendRatePerSecond,
      // Several instances on one libSQL server share each number's slots.
      ...(opened.engine === "libsql" ? { slots: new DbSlots(db) } : {}),
      maxRatePerSecond: config.sendRateMax,
    }),
    jobs,
    egress,
    resolver: overrides.resolver,
    metrics: createAppMetrics(),
    commits: new GroupCommit(db, {
      atomic: { db, engine: opened.engine, dbBatch: opened.libsql?.access },
    }),
    lookups,
    parts,
    draining: new Draining(),
    streams: new OpenStreams(),
    async [Symbol.asyncDispose]() {
      egress.close();
      mediaEgress.close();
      await db.destroy();
    },
  };
}

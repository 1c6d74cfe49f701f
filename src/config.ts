import { z } from "zod";
import type { LogLevel } from "./log.ts";

const bool = z.enum(["true", "false", "1", "0"]).transform((v) =>
  v === "true" || v === "1"
);

const EnvSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  HOST: z.string().default("0.0.0.0"),
  DATA_DIR: z.string().default("./data"),
  DATABASE_URL: z.string().optional(),
  DATABASE_AUTH_TOKEN: z.string().optional(),
  MEDIA_STORE: z.string().optional(),
  S3_ENDPOINT: z.string().url().optional(),
  S3_REGION: z.string().default("us-east-1"),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  META_GRAPH_URL: z.string().url().default("https://graph.facebook.com/v22.0"),
  META_APP_SECRET: z.string().optional(),
  META_VERIFY_TOKEN: z.string().optional(),
  SECRET_KEY: z.string().min(32, "must be at least 32 characters").optional(),
  WORKERS: z.coerce.number().int().min(1).max(256).default(16),
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  WEBHOOK_ALLOW_HTTP: bool.default(false),
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(64),
  WEBHOOK_MAX_IN_FLIGHT: z.coerce.number().int().min(1).max(1024).default(16),
  WEBHOOK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(30),
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters")
    .optional(),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error", "silent"]).default(
    "info",
  ),
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  SEND_RATE_PER_SECOND: z.coerce.number().positive().default(80),
  CACHE_TTL_MS: z.coerce.number().int().min(0).default(1000),
  MEDIA_MAX_BYTES: z.coerce.number().int().positive().default(
    100 * 1024 * 1024,
  ),
  MEDIA_DOWNLOAD_HOSTS: z.string().default("lookaside.fbsbx.com").transform(
    (v) => v.split(",").map((h) => h.trim().toLowerCase()).filter(Boolean),
  ).pipe(
    z.array(
      z.string().regex(
        /^(\*\.)?[a-z0-9.:-]+$/,
        "must be host names, e.g. lookaside.fbsbx.com or *.fbsbx.com",
      ),
    ).min(1),
  ),
  MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: bool.default(false),
  SOCIAL_CALLS_PER_HOUR: z.coerce.number().int().min(1).max(100_000).default(
    120,
  ),
  // How long one /meta/webhook body may take to arrive: a trickled body holds a read slot.
  META_WEBHOOK_READ_TIMEOUT_MS: z.coerce.number().int().min(1).default(10_000),
  // Longer than the Graph API timeout (15 s), so a deploy lets in-flight sends finish.
  SHUTDOWN_DRAIN_MS: z.coerce.number().int().min(0).default(20_000),
});

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string;
  readonly databaseAuthToken: string | undefined;
  /** `file:<dir>` or `s3://bucket/prefix`. */
  readonly mediaStore: string;
  readonly s3: {
    readonly endpoint: string | undefined;
    readonly region: string;
    readonly accessKeyId: string | undefined;
    readonly secretAccessKey: string | undefined;
  };
  readonly publicBaseUrl: string | undefined;
  readonly metaGraphUrl: string;
  readonly metaAppSecret: string | undefined;
  readonly metaWebhookReadTimeoutMs: number;
  readonly metaVerifyToken: string | undefined;
  readonly secretKey: string | undefined;
  readonly workers: number;
  readonly webhookAllowPrivateNetworks: boolean;
  readonly webhookAllowHttp: boolean;
  /** Webhook attempts in flight in this process. */
  readonly webhookConcurrency: number;
  /** Webhook attempts in flight per subscription, so one slow endpoint cannot take every slot. */
  readonly webhookMaxInFlight: number;
  /** Delivery log rows and delivered events are kept this many days. */
  readonly webhookRetentionDays: number;
  /** Bearer token for GET /metrics; without it only loopback clients may read it. */
  readonly metricsToken: string | undefined;
  readonly logLevel: LogLevel;
  readonly bodyLimitBytes: number;
  readonly sendRatePerSecond: number;
  /** On libSQL, how often the cached keys, channels and templates are checked for changes (0: every request). */
  readonly cacheTtlMs: number;
  readonly mediaMaxBytes: number;
  /** Hosts inbound media is downloaded from (exact, or `*.suffix`); the only hosts besides the Graph API that see a channel token. */
  readonly mediaDownloadHosts: readonly string[];
  /** Lets media downloads reach loopback/private addresses over plain http (dev and tests: the simulator). */
  readonly mediaDownloadAllowPrivate: boolean;
  readonly shutdownDrainMs: number;
  /** Upstream calls per hour per social account (on-demand reads and background refreshes together). */
  readonly socialCallsPerHour: number;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** Parses the environment once; lists every problem at once. */
export function loadConfig(
  env: Record<string, string | undefined>,
): Config {
  const result = EnvSchema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      `Cannot load configuration:\n${z.prettifyError(result.error)}`,
    );
  }
  const e = result.data;
  const dataDir = e.DATA_DIR.replace(/\/+$/, "");
  return Object.freeze({
    port: e.PORT,
    host: e.HOST,
    dataDir,
    databaseUrl: e.DATABASE_URL ?? `file:${dataDir}/app.db`,
    databaseAuthToken: e.DATABASE_AUTH_TOKEN,
    mediaStore: e.MEDIA_STORE ?? `file:${dataDir}/media`,
    s3: Object.freeze({
      endpoint: e.S3_ENDPOINT,
      region: e.S3_REGION,
      accessKeyId: e.S3_ACCESS_KEY_ID,
      secretAccessKey: e.S3_SECRET_ACCESS_KEY,
    }),
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ""),
    metaGraphUrl: e.META_GRAPH_URL.replace(/\/+$/, ""),
    metaAppSecret: e.META_APP_SECRET,
    metaWebhookReadTimeoutMs: e.META_WEBHOOK_READ_TIMEOUT_MS,
    metaVerifyToken: e.META_VERIFY_TOKEN,
    secretKey: e.SECRET_KEY,
    workers: e.WORKERS,
    webhookAllowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    webhookAllowHttp: e.WEBHOOK_ALLOW_HTTP,
    webhookConcurrency: e.WEBHOOK_CONCURRENCY,
    webhookMaxInFlight: e.WEBHOOK_MAX_IN_FLIGHT,
    webhookRetentionDays: e.WEBHOOK_RETENTION_DAYS,
    metricsToken: e.METRICS_TOKEN,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    sendRatePerSecond: e.SEND_RATE_PER_SECOND,
    cacheTtlMs: e.CACHE_TTL_MS,
    mediaMaxBytes: e.MEDIA_MAX_BYTES,
    mediaDownloadHosts: Object.freeze(e.MEDIA_DOWNLOAD_HOSTS),
    mediaDownloadAllowPrivate: e.MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS,
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    socialCallsPerHour: e.SOCIAL_CALLS_PER_HOUR,
  });
}

/** What `serve` needs beyond loadConfig; throws a ConfigError that names the missing variable. */
export function assertServeConfig(config: Config): void {
  if (!config.publicBaseUrl) {
    throw new ConfigError(
      "Cannot start serve: set PUBLIC_BASE_URL (this server's public origin, e.g. https://api.example.com; signed media URLs are built from it, never from a request's Host header)",
    );
  }
}

/** Reads the process environment (the only place that touches Deno.env). */
export function readEnv(): Record<string, string | undefined> {
  return Deno.env.toObject();
}

import type { LogLevel } from "./log.ts";
import { IpRanges } from "./net/ip_range.ts";

// The environment is read by hand rather than with zod, so `serve` does not
// load zod before it is ready; the rules and messages are zod's (z.coerce,
// .url(), .enum()) as they were (tests/config/config_rules_test.ts).

/** One variable's reader: the value, or a problem (zod's wording); `at` names the variable. */
type Read<T> = (raw: string, problems: Problem[], at: string) => T;
interface Problem {
  message: string;
  at: string;
}

const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
const BOOL = ["true", "false", "1", "0"] as const;
const HOST_NAME = /^(\*\.)?[a-z0-9.:-]+$/;

const text: Read<string> = (raw) => raw;

function minLength(min: number, message: string): Read<string> {
  return (raw, problems, at) => {
    if (raw.length < min) problems.push({ message, at });
    return raw;
  };
}

/** z.coerce.number() with .int(), .min(), .max() or .positive(). */
function num(
  rule: { int?: boolean; min?: number; max?: number; positive?: boolean },
): Read<number> {
  return (raw, problems, at) => {
    const n = Number(raw);
    if (!Number.isFinite(n)) {
      const received = Number.isNaN(n) ? "NaN" : String(n);
      problems.push({
        message: `Invalid input: expected number, received ${received}`,
        at,
      });
    } else if (rule.int && !Number.isInteger(n)) {
      problems.push({
        message: "Invalid input: expected int, received number",
        at,
      });
    } else {
      if (rule.int && n > Number.MAX_SAFE_INTEGER) {
        problems.push({
          message: `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`,
          at,
        });
      }
      if (rule.int && n < Number.MIN_SAFE_INTEGER) {
        problems.push({
          message: `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`,
          at,
        });
      }
      if (rule.positive && !(n > 0)) {
        problems.push({ message: "Too small: expected number to be >0", at });
      }
      if (rule.min !== undefined && n < rule.min) {
        problems.push({
          message: `Too small: expected number to be >=${rule.min}`,
          at,
        });
      }
      if (rule.max !== undefined && n > rule.max) {
        problems.push({
          message: `Too big: expected number to be <=${rule.max}`,
          at,
        });
      }
    }
    return n;
  };
}

function oneOf<const T extends string>(options: readonly T[]): Read<T> {
  const expected = [...options].sort(byZodOrder(options)).map((o) => `"${o}"`)
    .join("|");
  return (raw, problems, at) => {
    if (!(options as readonly string[]).includes(raw)) {
      problems.push({
        message: `Invalid option: expected one of ${expected}`,
        at,
      });
    }
    return raw as T;
  };
}

/** zod lists an enum's options in its own order: "0" and "1" (index-like keys) first. */
function byZodOrder(options: readonly string[]) {
  const key = (o: string) => /^(0|[1-9]\d*)$/.test(o) ? Number(o) : Infinity;
  return (a: string, b: string) =>
    key(a) - key(b) || options.indexOf(a) - options.indexOf(b);
}

const bool: Read<boolean> = (raw, problems, at) => {
  const v = oneOf(BOOL)(raw, problems, at);
  return v === "true" || v === "1";
};

/** z.string().url(): parsable once trimmed; tabs and newlines dropped. */
const url: Read<string> = (raw, problems, at) => {
  const trimmed = raw.trim();
  if (!URL.canParse(trimmed)) problems.push({ message: "Invalid URL", at });
  return trimmed.replace(/[\t\n\r]/g, "");
};

const hostList: Read<string[]> = (raw, problems, at) => {
  const hosts = raw.split(",").map((h) => h.trim().toLowerCase())
    .filter(Boolean);
  hosts.forEach((host, i) => {
    if (!HOST_NAME.test(host)) {
      problems.push({
        message: "must be host names, e.g. lookaside.fbsbx.com or *.fbsbx.com",
        at: `${at}[${i}]`,
      });
    }
  });
  if (hosts.length < 1) {
    problems.push({
      message: "Too small: expected array to have >=1 items",
      at,
    });
  }
  return hosts;
};

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/** A duration such as `6h`, `30m`, `900s` or `1d` (a bare number is seconds), in ms. */
const duration: Read<number> = (raw, problems, at) => {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(raw);
  const ms = m ? Number(m[1]) * DURATION_UNITS[m[2] ?? "s"]! : NaN;
  if (!(ms >= 60_000)) {
    problems.push({
      message:
        "must be a duration of at least a minute, e.g. 6h, 30m or 900s (a bare number is seconds)",
      at,
    });
  }
  return ms;
};

const ipRanges: Read<IpRanges> = (raw, problems, at) => {
  const { ranges, problems: bad } = IpRanges.parse(raw);
  for (const message of bad) problems.push({ message, at });
  return ranges;
};

/** A variable with a default (a string, read like a set value) or none (undefined when unset). */
type Field = [Read<unknown>, string?];

/** Every variable, in the order problems are listed. */
const ENV = {
  PORT: [num({ int: true, min: 0, max: 65535 }), "8080"],
  HOST: [text, "0.0.0.0"],
  DATA_DIR: [text, "./data"],
  DATABASE_URL: [text],
  DATABASE_AUTH_TOKEN: [text],
  MEDIA_STORE: [text],
  S3_ENDPOINT: [url],
  S3_REGION: [text, "us-east-1"],
  S3_ACCESS_KEY_ID: [text],
  S3_SECRET_ACCESS_KEY: [text],
  PUBLIC_BASE_URL: [url],
  META_GRAPH_URL: [url, "https://graph.facebook.com/v22.0"],
  META_APP_SECRET: [text],
  META_VERIFY_TOKEN: [text],
  META_APP_ID: [text],
  SECRET_KEY: [minLength(32, "must be at least 32 characters")],
  WORKERS: [num({ int: true, min: 1, max: 256 }), "16"],
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: [bool, "false"],
  WEBHOOK_ALLOW_HTTP: [bool, "false"],
  WEBHOOK_CONCURRENCY: [num({ int: true, min: 1, max: 1024 }), "64"],
  WEBHOOK_MAX_IN_FLIGHT: [num({ int: true, min: 1, max: 1024 }), "16"],
  // Unset: a quarter of WEBHOOK_CONCURRENCY (see loadConfig).
  WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT: [num({ int: true, min: 1, max: 1024 })],
  WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT: [
    num({ int: true, min: 1, max: 10_000 }),
    "25",
  ],
  WEBHOOK_RETENTION_DAYS: [num({ int: true, min: 1, max: 3650 }), "30"],
  METRICS_TOKEN: [minLength(16, "must be at least 16 characters")],
  LOG_LEVEL: [oneOf(LOG_LEVELS), "info"],
  BODY_LIMIT_BYTES: [num({ int: true, min: 1024 }), String(1024 * 1024)],
  SEND_RATE_PER_SECOND: [num({ positive: true }), "80"],
  SEND_RATE_MAX: [num({ positive: true }), "1000"],
  TEMPLATE_SYNC_INTERVAL: [duration, "6h"],
  CACHE_TTL_MS: [num({ int: true, min: 0 }), "1000"],
  MEDIA_MAX_BYTES: [
    num({ int: true, positive: true }),
    String(100 * 1024 * 1024),
  ],
  MEDIA_DOWNLOAD_HOSTS: [hostList, "lookaside.fbsbx.com"],
  MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS: [bool, "false"],
  SOCIAL_CALLS_PER_HOUR: [num({ int: true, min: 1, max: 100_000 }), "120"],
  // How long one /meta/webhook body may take to arrive: a trickled body holds a read slot.
  META_WEBHOOK_READ_TIMEOUT_MS: [num({ int: true, min: 1 }), "10000"],
  // Bodies read before their signature is known, all senders together (webhook_gate.ts).
  META_WEBHOOK_MAX_READS: [num({ int: true, min: 1, max: 4096 }), "16"],
  META_WEBHOOK_MAX_BUFFERED_BYTES: [
    num({ int: true, min: 3 * 1024 * 1024 }),
    String(16 * 1024 * 1024),
  ],
  META_WEBHOOK_MIN_BYTES_PER_SECOND: [num({ int: true, min: 1 }), "65536"],
  TRUSTED_PROXIES: [ipRanges, ""],
  AGENT_RATE_LIMIT: [num({ int: true, min: 1, max: 1_000_000 }), "600"],
  // Longer than the Graph API timeout (15 s), so a deploy lets in-flight sends finish.
  SHUTDOWN_DRAIN_MS: [num({ int: true, min: 0 }), "20000"],
  // How long /readyz answers 503 while requests are still served at shutdown.
  SHUTDOWN_DELAY_MS: [num({ int: true, min: 0, max: 60_000 }), "2000"],
} satisfies Record<string, Field>;

/** Every variable the program reads, in the order problems are listed. */
export const ENV_NAMES: readonly string[] = Object.keys(ENV);

type Env = {
  [K in keyof typeof ENV]: (typeof ENV)[K] extends [Read<infer T>, string] ? T
    : (typeof ENV)[K] extends [Read<infer T>] ? T | undefined
    : never;
};

/** Reads every variable; the problems in zod's prettifyError layout, or the values. */
function parseEnv(
  env: Record<string, string | undefined>,
): { problems: string[] } | { data: Env } {
  const problems: Problem[] = [];
  const data: Record<string, unknown> = {};
  for (
    const [name, [read, fallback]] of Object.entries(ENV) as [
      string,
      Field,
    ][]
  ) {
    const raw = env[name] ?? fallback;
    data[name] = raw === undefined ? undefined : read(raw, problems, name);
  }
  if (problems.length) {
    // prettifyError lists an item's problem (`X[0]`) after every variable's.
    const depth = (p: Problem) => p.at.includes("[") ? 2 : 1;
    return {
      problems: problems.sort((a, b) => depth(a) - depth(b)).map((p) =>
        `✖ ${p.message}\n  → at ${p.at}`
      ),
    };
  }
  return { data: data as Env };
}

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
  /** Bounds on /meta/webhook bodies read before their signature is known (src/http/webhook_gate.ts). */
  readonly metaWebhookGate: {
    readonly maxReads: number;
    readonly maxBufferedBytes: number;
    readonly minBytesPerSecond: number;
  };
  /** Peers whose X-Forwarded-For is believed (src/http/client_address.ts); empty: none. */
  readonly trustedProxies: IpRanges;
  /** Requests per minute of each agent (user token or panel session). */
  readonly agentRateLimit: number;
  readonly metaVerifyToken: string | undefined;
  /** The Meta app's id: with META_APP_SECRET, the app token for debug_token and the app's webhook subscription. */
  readonly metaAppId: string | undefined;
  readonly secretKey: string | undefined;
  readonly workers: number;
  readonly webhookAllowPrivateNetworks: boolean;
  readonly webhookAllowHttp: boolean;
  /** Webhook attempts in flight in this process. */
  readonly webhookConcurrency: number;
  /** Webhook attempts in flight per subscription, so one slow endpoint cannot take every slot. */
  readonly webhookMaxInFlight: number;
  /** Webhook attempts in flight per account, all its subscriptions together, so one account cannot take every slot. */
  readonly webhookMaxInFlightPerAccount: number;
  /** Subscriptions an account may have; POST /webhooks refuses one more (WEBHOOK_LIMIT_REACHED). */
  readonly webhookMaxSubscriptionsPerAccount: number;
  /** Delivery log rows and delivered events are kept this many days. */
  readonly webhookRetentionDays: number;
  /** Bearer token for GET /metrics; without it only loopback clients may read it. */
  readonly metricsToken: string | undefined;
  readonly logLevel: LogLevel;
  readonly bodyLimitBytes: number;
  readonly sendRatePerSecond: number;
  /** The highest per-number rate a HIGH throughput level gives (Meta allows up to 1,000). */
  readonly sendRateMax: number;
  /** A WABA's templates are synced again once its last sync is this old (ms). */
  readonly templateSyncIntervalMs: number;
  /** On libSQL, how often the cached keys, channels and templates are checked for changes (0: every request). */
  readonly cacheTtlMs: number;
  readonly mediaMaxBytes: number;
  /** Hosts inbound media is downloaded from (exact, or `*.suffix`); the only hosts besides the Graph API that see a channel token. */
  readonly mediaDownloadHosts: readonly string[];
  /** Lets media downloads reach loopback/private addresses over plain http (dev and tests: the simulator). */
  readonly mediaDownloadAllowPrivate: boolean;
  readonly shutdownDrainMs: number;
  /** At shutdown, how long /readyz answers 503 before the server stops taking requests (a proxy's health check notices). */
  readonly shutdownDelayMs: number;
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
  const result = parseEnv(env);
  if ("problems" in result) {
    throw new ConfigError(
      `Cannot load configuration:\n${result.problems.join("\n")}`,
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
    metaWebhookGate: Object.freeze({
      maxReads: e.META_WEBHOOK_MAX_READS,
      maxBufferedBytes: e.META_WEBHOOK_MAX_BUFFERED_BYTES,
      minBytesPerSecond: e.META_WEBHOOK_MIN_BYTES_PER_SECOND,
    }),
    trustedProxies: e.TRUSTED_PROXIES,
    agentRateLimit: e.AGENT_RATE_LIMIT,
    metaVerifyToken: e.META_VERIFY_TOKEN,
    metaAppId: e.META_APP_ID,
    secretKey: e.SECRET_KEY,
    workers: e.WORKERS,
    webhookAllowPrivateNetworks: e.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
    webhookAllowHttp: e.WEBHOOK_ALLOW_HTTP,
    webhookConcurrency: e.WEBHOOK_CONCURRENCY,
    webhookMaxInFlight: e.WEBHOOK_MAX_IN_FLIGHT,
    webhookMaxInFlightPerAccount: e.WEBHOOK_MAX_IN_FLIGHT_PER_ACCOUNT ??
      Math.max(1, Math.floor(e.WEBHOOK_CONCURRENCY / 4)),
    webhookMaxSubscriptionsPerAccount: e.WEBHOOK_MAX_SUBSCRIPTIONS_PER_ACCOUNT,
    webhookRetentionDays: e.WEBHOOK_RETENTION_DAYS,
    metricsToken: e.METRICS_TOKEN,
    logLevel: e.LOG_LEVEL,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    sendRatePerSecond: e.SEND_RATE_PER_SECOND,
    sendRateMax: e.SEND_RATE_MAX,
    templateSyncIntervalMs: e.TEMPLATE_SYNC_INTERVAL,
    cacheTtlMs: e.CACHE_TTL_MS,
    mediaMaxBytes: e.MEDIA_MAX_BYTES,
    mediaDownloadHosts: Object.freeze(e.MEDIA_DOWNLOAD_HOSTS),
    mediaDownloadAllowPrivate: e.MEDIA_DOWNLOAD_ALLOW_PRIVATE_NETWORKS,
    shutdownDrainMs: e.SHUTDOWN_DRAIN_MS,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
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
  if (!config.metaAppSecret) {
    throw new ConfigError(
      "Cannot start serve: set META_APP_SECRET (your Meta app's secret, under App settings > Basic in the app dashboard; every post to /meta/webhook is verified with it, and without it no inbound message or status could be accepted)",
    );
  }
}

/** Reads the process environment (the only place that touches Deno.env). */
export function readEnv(): Record<string, string | undefined> {
  return Deno.env.toObject();
}

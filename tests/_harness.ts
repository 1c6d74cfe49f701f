// Builds the real app in-process over a real database (a SQLite file, or a real sqld).
import { loadConfig } from "../src/config.ts";
import {
  type Container,
  type ContainerOverrides,
  createContainer,
} from "../src/container.ts";
import { type Clock, ManualClock } from "../src/clock.ts";
import { createLogger } from "../src/log.ts";
import { migrateToLatest } from "../src/db/migrator.ts";
import { type AppExtensions, createApp } from "../src/http/app.ts";
import type { Account } from "../src/domain/accounts/account.ts";
import type { Channel } from "../src/domain/channels/channel.ts";
import { type Scope, SCOPES } from "../src/domain/accounts/scopes.ts";
import {
  createAccount,
  createApiKey,
} from "../src/domain/accounts/account_service.ts";
import { createChannel } from "../src/domain/channels/channel_service.ts";
import { type Sqld, startSqld } from "./_support/sqld.ts";

export type EngineName = "sqlite" | "libsql";
export const ENGINES: EngineName[] = ["sqlite", "libsql"];

export interface Tenant {
  account: Account;
  channel: Channel;
  /** An API key with every scope. */
  key: string;
}

export interface TestResponse {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

export interface RequestOptions {
  body?: unknown;
  /** Sent as is (with the given content type) instead of JSON. */
  rawBody?: string;
  key?: string | null;
  headers?: Record<string, string>;
  /** Sent to this app (e.g. another createApp over the harness's container) instead. */
  app?: Harness["app"];
}

export interface Harness extends AsyncDisposable {
  container: Container;
  /** `env` is what Deno.serve passes as connection info (`remoteAddr`). */
  app: { fetch(req: Request, env?: unknown): Response | Promise<Response> };
  clock: Clock;
  dir: string;
  engine: EngineName;
  /** The default tenant (account "acme", country AR). */
  tenant: Tenant;
  request(
    method: string,
    path: string,
    options?: RequestOptions,
  ): Promise<TestResponse>;
  makeTenant(slug: string, options?: { country?: string }): Promise<Tenant>;
  makeKey(accountId: string, scopes: Scope[]): Promise<string>;
}

export interface HarnessOptions {
  engine?: EngineName;
  clock?: Clock;
  env?: Record<string, string>;
  extensions?: (container: Container) => AppExtensions;
  /** Resolver, TLS trust anchors and the like (clock and log come from above). */
  containerOverrides?: Omit<ContainerOverrides, "clock" | "log">;
  /** Runs on the fresh database before it is migrated to the latest version. */
  beforeMigrate?: (db: Container["db"]) => Promise<void>;
  /** As `dev` (the default: /metrics open to loopback) or `serve` runs the app. */
  mode?: "serve" | "dev";
  /**
   * libSQL: let the test open interactive transactions (forbidden otherwise:
   * no program path may), for tests of functions that take an executor and
   * run them in a transaction of the test's own.
   */
  allowTransactions?: boolean;
}

let tenantCounter = 0;

/** Creates an app over a fresh database with one seeded tenant. */
export async function createHarness(
  options: HarnessOptions = {},
): Promise<Harness> {
  const engine = options.engine ?? "sqlite";
  const dir = await Deno.makeTempDir({ prefix: "bm-test-" });
  let sqld: Sqld | undefined;
  if (engine === "libsql") sqld = await startSqld();
  const config = loadConfig({
    DATA_DIR: dir,
    DATABASE_URL: sqld ? sqld.url : `file:${dir}/app.db`,
    SECRET_KEY: "test-secret-key-0123456789abcdef-0123456789",
    META_APP_SECRET: "test-app-secret",
    META_VERIFY_TOKEN: "test-verify-token",
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: "true",
    WEBHOOK_ALLOW_HTTP: "true",
    MEDIA_STORE: `file:${dir}/media`,
    PUBLIC_BASE_URL: "http://localhost",
    LOG_LEVEL: "silent",
    ...options.env,
  });
  const clock = options.clock ?? new ManualClock();
  const container = createContainer(config, {
    ...options.containerOverrides,
    clock,
    log: createLogger(config.logLevel),
  });
  await options.beforeMigrate?.(container.db);
  await migrateToLatest(container.db, { libsql: container.dbBatch });
  // No request or worker path opens an interactive transaction on libSQL
  // (issue 30: one stalls every writer for 5 s when its process dies):
  // every libSQL test proves it, but those of the executor-taking functions
  // themselves, run in a transaction of their own as SQLite's paths run them.
  if (container.dbBatch && !options.allowTransactions) {
    container.dbBatch.forbidTransactions = true;
  }
  const app = createApp(container, {
    ...options.extensions?.(container),
    mode: options.mode ?? "dev",
  });

  async function makeKey(accountId: string, scopes: Scope[]): Promise<string> {
    return (await createApiKey(container, {
      accountId,
      scopes,
      rateLimit: 1_000_000,
    })).key;
  }

  async function makeTenant(
    slug: string,
    opts: { country?: string } = {},
  ): Promise<Tenant> {
    const n = ++tenantCounter;
    const account = await createAccount(container, {
      name: `Tenant ${slug}`,
      slug,
      country: opts.country ?? "AR",
    });
    const channel = await createChannel(container, {
      accountId: account.id,
      phoneNumber: `+1555010${String(n).padStart(4, "0")}`,
      displayName: `${slug} line`,
      upstreamPhoneNumberId: `10654035224${String(n).padStart(4, "0")}`,
      wabaId: `1022901293${String(n).padStart(4, "0")}`,
      accessToken: `token-${slug}`,
    });
    return { account, channel, key: await makeKey(account.id, [...SCOPES]) };
  }

  const tenant = await makeTenant(`acme-${crypto.randomUUID().slice(0, 8)}`);

  async function request(
    method: string,
    path: string,
    opts: RequestOptions = {},
  ): Promise<TestResponse> {
    const headers = new Headers(opts.headers);
    const key = opts.key === undefined ? tenant.key : opts.key;
    if (key !== null) headers.set("authorization", `Bearer ${key}`);
    let body: string | undefined;
    if (opts.rawBody !== undefined) body = opts.rawBody;
    else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      if (!headers.has("content-type")) {
        headers.set("content-type", "application/json");
      }
    }
    const url = path.startsWith("http") ? path : `http://localhost${path}`;
    const res = await (opts.app ?? app).fetch(
      new Request(url, { method, headers, body }),
    );
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* not JSON */ }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  return {
    container,
    app,
    clock,
    dir,
    engine,
    tenant,
    request,
    makeTenant,
    makeKey,
    async [Symbol.asyncDispose]() {
      await container[Symbol.asyncDispose]();
      await sqld?.stop();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Registers one test per storage engine (SQLite file and real sqld). */
export function engineTest(
  name: string,
  fn: (h: Harness) => Promise<void>,
  options: Omit<HarnessOptions, "engine"> = {},
): void {
  for (const engine of ENGINES) {
    Deno.test({
      name: `[${engine}] ${name}`,
      sanitizeResources: engine === "sqlite",
      sanitizeOps: engine === "sqlite",
      fn: async () => {
        await using h = await createHarness({ ...options, engine });
        await fn(h);
      },
    });
  }
}

import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { routePath } from "hono/route";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../container.ts";
import { AppError } from "../errors.ts";
import { newId } from "../ids.ts";
import { systemClock } from "../clock.ts";
import { authenticate } from "../domain/accounts/account_service.ts";
import type { AppEnv } from "./env.ts";
import { errorBody, handleError } from "./errors.ts";
import { LazyGroups, lazyRoutePath } from "./lazy_routes.ts";
import { authentication } from "./auth.ts";
import { sessionAuth } from "./panel_session.ts";
import { RateLimiter } from "./rate_limit.ts";
import { MemoryRateBuckets } from "../domain/accounts/rate_limit.ts";
import { DbRateBuckets } from "../domain/accounts/rate_limit_service.ts";
import { clientAddress } from "./client_address.ts";
import { WEBHOOK_GATE_LIMITS, WebhookGate } from "./webhook_gate.ts";
import { healthRoutes } from "./routes/health.ts";
import { docsRoutes } from "./routes/docs.ts";
import { mediaDownloadRoutes } from "./routes/media_download.ts";
import { metaWebhookRoutes } from "./routes/meta_webhook.ts";
import { metricsRoutes } from "./routes/metrics.ts";

const JSON_CONTENT_TYPE_REGEXP = /^application\/(?:[\w.+-]+\+)?json\b/i;

/**
 * Evaluated before any route module: in the bundle, a chunk that takes only
 * `z` from @hono/zod-openapi can run before that package's body adds
 * `.openapi()` to zod; openapi.ts needs the body, so importing it runs it.
 */
const beforeRoutes = () => import("./openapi.ts");

/**
 * The /api/v2 route groups, in the order the OpenAPI document lists them,
 * each with the first path segments of its routes; imported on first use
 * (see lazy_routes.ts).
 */
export const API_GROUPS = [
  {
    prefixes: ["/account"],
    load: async () => (await import("./routes/account.ts")).accountRoutes,
  },
  {
    prefixes: ["/channels"],
    load: async () => (await import("./routes/channels.ts")).channelRoutes,
  },
  {
    prefixes: ["/contacts"],
    load: async () => (await import("./routes/contacts.ts")).contactRoutes,
  },
  {
    prefixes: ["/templates"],
    load: async () => (await import("./routes/templates.ts")).templateRoutes,
  },
  {
    prefixes: ["/contacts", "/conversations"],
    load: async () =>
      (await import("./routes/conversations.ts")).conversationRoutes,
  },
  {
    prefixes: ["/conversations"],
    load: async () =>
      (await import("./routes/conversation_actions.ts"))
        .conversationActionRoutes,
  },
  {
    prefixes: ["/messages"],
    load: async () => (await import("./routes/messages.ts")).messageRoutes,
  },
  {
    prefixes: ["/media"],
    load: async () => (await import("./routes/media.ts")).mediaRoutes,
  },
  {
    prefixes: ["/webhooks"],
    load: async () => (await import("./routes/webhooks.ts")).webhookRoutes,
  },
  {
    prefixes: ["/events"],
    load: async () => (await import("./routes/events.ts")).eventRoutes,
  },
  {
    prefixes: ["/social"],
    load: async () => (await import("./routes/social.ts")).socialRoutes,
  },
];

/** The /api/v1 panel aliases (plain Hono, outside the document). */
export const PANEL_GROUPS = [
  {
    prefixes: ["/webhook-subscriptions"],
    load: async () =>
      (await import("./routes/panel_webhooks.ts")).panelWebhookRoutes,
  },
  {
    prefixes: ["/conversations"],
    load: async () =>
      (await import("./routes/panel_conversations.ts"))
        .panelConversationRoutes,
  },
  {
    prefixes: ["/agents"],
    load: async () =>
      (await import("./routes/panel_agents.ts")).panelAgentRoutes,
  },
  {
    prefixes: ["/media"],
    load: async () =>
      (await import("./routes/panel_media.ts")).panelMediaRoutes,
  },
];

/** The routes whose body is a file, not JSON: each checks its own type and size. */
const FILE_BODY_PATHS: ReadonlySet<string> = new Set(["/api/v1/media"]);

/** Extra route groups mounted at the top level and under /api/v2 (the messaging engine adds its own; their paths must not start with a lazy group's prefix). */
export interface AppExtensions {
  root?: Hono<AppEnv>[];
  api?: OpenAPIHono<AppEnv>[];
}

/** How the app is run: `dev` serves /metrics to loopback clients without METRICS_TOKEN; `serve` never does. */
export interface AppOptions extends AppExtensions {
  mode?: "serve" | "dev";
}

/** Builds the HTTP app: client address, request id and logging, public routes, then /api/v2 behind auth and rate limit. */
export function createApp(
  container: Container,
  options: AppOptions = {},
): Hono<AppEnv> {
  const config = container.config;
  const app = new Hono<AppEnv>();
  app.use("*", clientAddress(config.trustedProxies));
  app.use("*", async (c, next) => {
    const requestId = newId();
    const log = container.log.child({ requestId });
    c.set("requestId", requestId);
    c.set("log", log);
    c.header("X-Request-Id", requestId);
    const started = performance.now();
    await next();
    const ms = performance.now() - started;
    // The route pattern, not the path, keeps the label set small.
    const pattern = lazyRoutePath(c) ?? routePath(c, -1);
    const route = pattern.includes("*") ? "unmatched" : pattern;
    container.metrics.httpRequests.inc({
      method: c.req.method,
      route,
      status: String(c.res.status),
    });
    container.metrics.httpDuration.observe(
      { method: c.req.method, route },
      ms / 1_000,
    );
    log.info("Request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round(ms * 10) / 10,
      client: c.var.client.address,
    });
  });
  app.onError(handleError);
  app.notFound(notFound);

  app.route("/", healthRoutes(container));
  app.route("/", docsRoutes());
  // Real time, whatever the container's clock: it paces bytes arriving on sockets.
  const gate = new WebhookGate(systemClock, {
    ...WEBHOOK_GATE_LIMITS,
    maxReads: config.metaWebhookGate.maxReads,
    maxBufferedBytes: config.metaWebhookGate.maxBufferedBytes,
    minBytesPerSecond: config.metaWebhookGate.minBytesPerSecond,
    maxReadMs: config.metaWebhookReadTimeoutMs,
  }, {
    events: {
      refused: (reason) => container.metrics.unverifiedRefused.inc({ reason }),
    },
  });
  app.route("/", metaWebhookRoutes(container, gate));
  app.route("/", mediaDownloadRoutes(container));
  app.route("/", metricsRoutes(container, { gate, mode: options.mode }));
  for (const group of options.root ?? []) app.route("/", group);
  // One limiter for every route group of /api/v2 and /api/v1 and the
  // panel's: one bucket per credential (an agent's token and sessions share it).
  const limiter = new RateLimiter(container.clock, {
    agentLimit: config.agentRateLimit,
    // Several instances share a libSQL server: their buckets must be one.
    buckets: container.engine === "libsql"
      ? new DbRateBuckets(container.db)
      : new MemoryRateBuckets(),
  });
  const headerOnly = {
    onError: handleError,
    notFound,
    setup(sub: Hono<AppEnv>) {
      sub.use("*", async (c, next) => {
        c.header("X-Request-Id", c.var.requestId);
        await next();
      });
    },
  };
  new LazyGroups(
    container,
    [{
      prefixes: ["/panel"],
      load: async () => {
        const [{ panelRoutes }, { PanelEvents }] = await Promise.all([
          import("./routes/panel.ts"),
          import("./routes/panel_events.ts"),
        ]);
        return (c: Container) =>
          panelRoutes(c, { limiter, events: new PanelEvents(c) });
      },
    }],
    () => Promise.resolve(),
    "/panel",
  ).mount(app, "", headerOnly);

  const apiGroups = new LazyGroups(
    container,
    API_GROUPS,
    beforeRoutes,
    "/api/v2",
  );
  const api = new Hono<AppEnv>();
  api.get("/openapi.json", async (c) => {
    const { openApiDocument } = await container.parts.load(
      "OpenAPI document",
      () => import("./openapi_document.ts"),
    );
    return c.json(
      openApiDocument([...await apiGroups.all(), ...options.api ?? []]),
    );
  });
  const lazy = {
    ...headerOnly,
    setup(sub: Hono<AppEnv>) {
      headerOnly.setup(sub);
      guard(sub, container, limiter);
    },
  };
  // Before guard: a group's sub-app runs its own (see lazy_routes.ts).
  apiGroups.mount(api, "/api/v2", lazy);
  guard(api, container, limiter);
  for (const group of options.api ?? []) api.route("/", group);

  app.route("/api/v2", api);
  const panel = new Hono<AppEnv>();
  new LazyGroups(container, PANEL_GROUPS, beforeRoutes, "/api/v1").mount(
    panel,
    "/api/v1",
    lazy,
  );
  guard(panel, container, limiter);
  app.route("/api/v1", panel);
  return app;
}

function notFound(c: Context<AppEnv>): Response {
  return c.json(
    errorBody(
      c,
      "NOT_FOUND",
      `Cannot find route ${c.req.method} ${c.req.path}`,
    ),
    404,
  );
}

/**
 * The bearer credential, body limit, JSON-only bodies and the per-key rate
 * limit, in that order: an anonymous caller gets 401, never 413 or 415.
 */
function guard(
  router: Hono<AppEnv>,
  container: Container,
  limiter: RateLimiter,
): void {
  router.use(
    "*",
    authentication(
      (token) => authenticate(container, token),
      sessionAuth(container),
    ),
  );
  const jsonLimit = bodyLimit({
    maxSize: container.config.bodyLimitBytes,
    onError: () => {
      throw new AppError(
        "PAYLOAD_TOO_LARGE",
        `Cannot read request body: it is larger than ${container.config.bodyLimitBytes} bytes`,
      );
    },
  });
  // An upload's body is the file: its route checks its type and size.
  const isFile = (c: Context<AppEnv>) =>
    c.req.method === "POST" && FILE_BODY_PATHS.has(c.req.path);
  router.use("*", (c, next) => isFile(c) ? next() : jsonLimit(c, next));
  router.use("*", async (c, next) => {
    const method = c.req.method;
    if (
      (method === "POST" || method === "PATCH" || method === "PUT") &&
      !isFile(c)
    ) {
      const type = c.req.header("content-type");
      const length = c.req.header("content-length");
      const hasBody = (length !== undefined && length !== "0") ||
        c.req.header("transfer-encoding") !== undefined;
      if ((hasBody || type) && !JSON_CONTENT_TYPE_REGEXP.test(type ?? "")) {
        throw new AppError(
          "UNSUPPORTED_MEDIA_TYPE",
          `Cannot read request body: content type must be application/json, got "${
            type ?? "none"
          }"`,
        );
      }
    }
    await next();
  });
  router.use("*", limiter.middleware());
}

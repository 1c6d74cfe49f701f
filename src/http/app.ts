import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { routePath } from "hono/route";
import type { OpenAPIHono } from "@hono/zod-openapi";
import type { Container } from "../container.ts";
import { AppError } from "../errors.ts";
import { newId } from "../ids.ts";
import { authenticate } from "../domain/accounts/account_service.ts";
import type { AppEnv } from "./env.ts";
import { errorBody, handleError } from "./errors.ts";
import { newRouter } from "./openapi.ts";
import { authentication } from "./auth.ts";
import { rateLimit } from "./rate_limit.ts";
import { healthRoutes } from "./routes/health.ts";
import { docsRoutes } from "./routes/docs.ts";
import { accountRoutes } from "./routes/account.ts";
import { channelRoutes } from "./routes/channels.ts";
import { contactRoutes } from "./routes/contacts.ts";
import { templateRoutes } from "./routes/templates.ts";
import { conversationRoutes } from "./routes/conversations.ts";
import { conversationActionRoutes } from "./routes/conversation_actions.ts";
import { messageRoutes } from "./routes/messages.ts";
import { mediaDownloadRoutes, mediaRoutes } from "./routes/media.ts";
import { metaWebhookRoutes } from "./routes/meta_webhook.ts";
import { webhookRoutes } from "./routes/webhooks.ts";
import { eventRoutes } from "./routes/events.ts";
import { socialRoutes } from "./routes/social.ts";
import { metricsRoutes } from "./routes/metrics.ts";
import { panelWebhookRoutes } from "./routes/panel_webhooks.ts";
import { panelConversationRoutes } from "./routes/panel_conversations.ts";

const JSON_CONTENT_TYPE_REGEXP = /^application\/(?:[\w.+-]+\+)?json\b/i;

/** Extra route groups mounted at the top level and under /api/v2 (the messaging engine adds its own). */
export interface AppExtensions {
  root?: Hono<AppEnv>[];
  api?: OpenAPIHono<AppEnv>[];
}

/** Builds the HTTP app: request id and logging, public routes, then /api/v2 behind auth and rate limit. */
export function createApp(
  container: Container,
  extensions: AppExtensions = {},
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
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
    const pattern = routePath(c, -1);
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
    });
  });
  app.onError(handleError);
  app.notFound((c) =>
    c.json(
      errorBody(
        c,
        "NOT_FOUND",
        `Cannot find route ${c.req.method} ${c.req.path}`,
      ),
      404,
    )
  );

  app.route("/", healthRoutes(container));
  app.route("/", docsRoutes());
  app.route("/", metaWebhookRoutes(container));
  app.route("/", mediaDownloadRoutes(container));
  app.route("/", metricsRoutes(container));
  for (const group of extensions.root ?? []) app.route("/", group);

  const api = newRouter();
  api.openAPIRegistry.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    description: "API key (`bmk_...`) or agent user token (`bmu_...`)",
  });
  api.doc31("/openapi.json", {
    openapi: "3.1.0",
    info: {
      title: "Business Messaging API",
      version: "2.0.0",
      description:
        "Send and receive WhatsApp business messages; conversations, contacts, templates, channels and media.",
    },
    servers: [{ url: "/api/v2" }],
  });
  guard(api, container);
  api.route("/", accountRoutes(container));
  api.route("/", channelRoutes(container));
  api.route("/", contactRoutes(container));
  api.route("/", templateRoutes(container));
  api.route("/", conversationRoutes(container));
  api.route("/", conversationActionRoutes(container));
  api.route("/", messageRoutes(container));
  api.route("/", mediaRoutes(container));
  api.route("/", webhookRoutes(container));
  api.route("/", eventRoutes(container));
  api.route("/", socialRoutes(container));
  for (const group of extensions.api ?? []) api.route("/", group);

  app.route("/api/v2", api);
  const panel = new Hono<AppEnv>();
  guard(panel, container);
  panel.route("/", panelWebhookRoutes(container));
  panel.route("/", panelConversationRoutes(container));
  app.route("/api/v1", panel);
  return app;
}

/**
 * The bearer credential, body limit, JSON-only bodies and the per-key rate
 * limit, in that order: an anonymous caller gets 401, never 413 or 415.
 */
function guard(router: Hono<AppEnv>, container: Container): void {
  router.use(
    "*",
    authentication((token) => authenticate(container, token)),
  );
  router.use(
    "*",
    bodyLimit({
      maxSize: container.config.bodyLimitBytes,
      onError: () => {
        throw new AppError(
          "PAYLOAD_TOO_LARGE",
          `Cannot read request body: it is larger than ${container.config.bodyLimitBytes} bytes`,
        );
      },
    }),
  );
  router.use("*", async (c, next) => {
    const method = c.req.method;
    if (method === "POST" || method === "PATCH" || method === "PUT") {
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
  router.use("*", rateLimit(container.clock));
}

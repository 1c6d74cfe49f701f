import { Hono } from "hono";
import type { Container } from "../../container.ts";
import { safeEqual } from "../../crypto.ts";
import { renderMetrics } from "../../domain/system/metrics_service.ts";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../env.ts";
import type { WebhookGate } from "../webhook_gate.ts";

/** Headers a reverse proxy adds: a proxied request is not a local one, whatever its socket says. */
const FORWARDING_HEADERS = ["forwarded", "x-forwarded-for", "x-real-ip"];

function isLoopback(address: string): boolean {
  return address === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(address);
}

/**
 * GET /metrics in the Prometheus text format. With METRICS_TOKEN set it
 * needs `Authorization: Bearer <token>`. Without it, `serve` refuses every
 * request (behind a proxy that adds no forwarding header, the internet looks
 * like loopback), and `dev` serves loopback clients only, never a request
 * that carries a forwarding header.
 */
export function metricsRoutes(
  container: Container,
  options: { gate: WebhookGate; mode?: "serve" | "dev" },
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/metrics", async (c) => {
    const token = container.config.metricsToken;
    if (token) {
      const given = /^bearer\s+(\S+)$/i.exec(
        c.req.header("authorization") ?? "",
      )
        ?.[1];
      if (!given || !safeEqual(given, token)) {
        c.header("WWW-Authenticate", 'Bearer realm="metrics"');
        throw new AppError(
          "UNAUTHORIZED",
          'Cannot read metrics: send "Authorization: Bearer <METRICS_TOKEN>"',
        );
      }
    } else if (options.mode !== "dev") {
      throw new AppError(
        "FORBIDDEN",
        "Cannot read metrics: set METRICS_TOKEN and send it as a bearer token",
      );
    } else {
      const forwarded = FORWARDING_HEADERS.some((h) => c.req.header(h));
      if (forwarded || !isLoopback(c.var.client.address)) {
        throw new AppError(
          "FORBIDDEN",
          "Cannot read metrics: without METRICS_TOKEN, dev serves them to loopback clients only",
        );
      }
    }
    refreshGate(container, options.gate);
    const text = await renderMetrics(container);
    return c.body(text, 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    });
  });
  return app;
}

function refreshGate(container: Container, gate: WebhookGate): void {
  const stats = gate.stats();
  const bounds = container.config.metaWebhookGate;
  container.metrics.unverifiedReads.reset([
    { labels: { state: "reading" }, value: stats.reads },
    { labels: { state: "waiting" }, value: stats.waiting },
    { labels: { state: "limit" }, value: bounds.maxReads },
  ]);
  container.metrics.unverifiedBytes.reset([
    { labels: { state: "buffered" }, value: stats.bufferedBytes },
    { labels: { state: "peak" }, value: stats.peakBufferedBytes },
    { labels: { state: "reserved" }, value: stats.reservedBytes },
    { labels: { state: "limit" }, value: bounds.maxBufferedBytes },
  ]);
}

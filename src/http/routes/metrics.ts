import { Hono } from "hono";
import type { Container } from "../../container.ts";
import { safeEqual } from "../../crypto.ts";
import { renderMetrics } from "../../domain/system/metrics_service.ts";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../env.ts";

/** Headers a reverse proxy adds: a proxied request is not a local one, whatever its socket says. */
const FORWARDING_HEADERS = ["forwarded", "x-forwarded-for", "x-real-ip"];

function isLoopback(hostname: string | undefined): boolean {
  if (!hostname) return false;
  const ip = hostname.replace(/^::ffff:/i, "");
  return ip === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(ip);
}

/**
 * GET /metrics in the Prometheus text format. With METRICS_TOKEN set it
 * needs `Authorization: Bearer <token>`; without it, only direct loopback
 * clients are served (never a request a proxy forwarded).
 */
export function metricsRoutes(container: Container): Hono<AppEnv> {
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
    } else {
      const info = c.env as { remoteAddr?: { hostname?: string } } | undefined;
      const forwarded = FORWARDING_HEADERS.some((h) => c.req.header(h));
      if (forwarded || !isLoopback(info?.remoteAddr?.hostname)) {
        throw new AppError(
          "FORBIDDEN",
          "Cannot read metrics: without METRICS_TOKEN they are served to loopback clients only",
        );
      }
    }
    const text = await renderMetrics(container);
    return c.body(text, 200, {
      "content-type": "text/plain; version=0.0.4; charset=utf-8",
    });
  });
  return app;
}

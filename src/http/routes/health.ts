import { Hono } from "hono";
import type { Container } from "../../container.ts";
import { AppError } from "../../errors.ts";
import { checkReadiness } from "../../domain/system/readiness_service.ts";
import type { AppEnv } from "../env.ts";

/**
 * Liveness (the process up, every part of its program loaded: one that
 * failed needs a restart, see program_parts.ts) and readiness (that, the
 * database reachable, migrations current).
 */
export function healthRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/healthz", (c) => {
    if (container.parts.broken) {
      throw new AppError(
        "SERVICE_UNAVAILABLE",
        "Service needs a restart: a part of its program failed to load",
      );
    }
    return c.json({ status: "ok" });
  });
  app.get("/readyz", async (c) => {
    const result = await checkReadiness(container);
    if (result.ready) return c.json({ status: "ready" });
    // The one onError renders it: the error envelope, 503 (the message,
    // with the database's error, goes to the log, not to the client).
    throw new AppError(
      "SERVICE_UNAVAILABLE",
      `Service is not ready: ${result.reason}${
        result.detail ? ` (${result.detail})` : ""
      }`,
    );
  });
  return app;
}

import { Hono } from "hono";
import type { Container } from "../../container.ts";
import { checkReadiness } from "../../domain/system/readiness_service.ts";
import type { AppEnv } from "../env.ts";

/** Liveness (process up) and readiness (database reachable, migrations current). */
export function healthRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/healthz", (c) => c.json({ status: "ok" }));
  app.get("/readyz", async (c) => {
    const result = await checkReadiness(container);
    if (result.ready) return c.json({ status: "ready" });
    return c.json({ status: "unavailable", reason: result.reason }, 503);
  });
  return app;
}

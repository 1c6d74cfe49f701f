import { Hono } from "hono";
import type { AppEnv } from "../env.ts";
import { DOCS_HTML } from "./docs_page.ts";

/** A self-contained reference page rendered from /api/v2/openapi.json (no CDN). */
export function docsRoutes(): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.get("/docs", (c) => c.html(DOCS_HTML));
  return app;
}

// POST /api/v1/media?phoneNumberId=<channel id>[&filename=<name>]: uploads a
// file to Meta through the channel's number and answers its media id, for a
// send by `{ "id": ... }` (the panel's template picker uploads header media
// with it). The body is the file itself, its Content-Type the file's type;
// the Cloud API's types and limits apply (docs/panel.md). Answered as
// `{ data }` like the other panel endpoints.
import { Hono } from "hono";
import { z } from "@hono/zod-openapi";
import type { Container } from "../../container.ts";
import { uploadMedia } from "../../domain/media/upload_service.ts";
import { requireScope } from "../auth.ts";
import type { AppEnv } from "../env.ts";
import { parseOrRefuse } from "../openapi.ts";

const UploadQuery = z.strictObject({
  phoneNumberId: z.string().min(1).max(64),
  filename: z.string().min(1).max(255).optional(),
});

export function panelMediaRoutes(container: Container): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.post("/media", requireScope("messages:write"), async (c) => {
    const query = parseOrRefuse("query", UploadQuery, c.req.query());
    const length = c.req.header("content-length");
    const data = await uploadMedia(container, {
      accountId: c.get("principal").accountId,
      phoneNumberId: query.phoneNumberId,
      mimeType: c.req.header("content-type"),
      fileName: query.filename,
      declaredBytes: length && /^\d+$/.test(length)
        ? Number(length)
        : undefined,
      body: c.req.raw.body,
    });
    return c.json({ data }, 201);
  });
  return app;
}

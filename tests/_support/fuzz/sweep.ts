// Every method on every path: the document's paths (real ids, a valid key,
// a `{}` body where a body is allowed), the routes outside the document
// (Meta webhook, health, metrics, docs, media download, the v1 panel) and an
// unknown path.
import type { Operation } from "../../http/_routes.ts";
import { API_PREFIX } from "../../http/_routes.ts";
import type { Pool } from "./pool.ts";
import { type FuzzRequest, METHODS } from "./requests.ts";

export function sweepRequests(ops: Operation[], pool: Pool): FuzzRequest[] {
  const paths = new Map<string, Operation>();
  for (const op of ops) if (!paths.has(op.path)) paths.set(op.path, op);
  const urls = [...paths.values()].map((op) => ({
    label: op.path,
    // The second row of each kind: the first webhook must outlive DELETE.
    url: API_PREFIX +
      op.path.replace(
        /\{(\w+)\}/g,
        (_m, name: string) => pool.value(op, name, false, 1),
      ),
  }));
  const outside = [
    "/meta/webhook",
    "/healthz",
    "/readyz",
    "/metrics",
    "/docs",
    `${API_PREFIX}/openapi.json`,
    `${API_PREFIX}/unknown`,
    `/media/download/${pool.row("media", 0)}`,
    "/api/v1/webhook-subscriptions",
    `/api/v1/webhook-subscriptions/${pool.row("webhooks", 0)}`,
  ];
  for (const url of outside) {
    urls.push({ label: url.replace(/[0-9a-f-]{36}/, "{id}"), url });
  }
  const out: FuzzRequest[] = [];
  for (const { label, url } of urls) {
    for (const method of METHODS) {
      const withBody = method !== "GET" && method !== "HEAD";
      out.push({
        label,
        method,
        url,
        headers: {
          authorization: pool.authorization("valid", 0)!,
          ...(withBody ? { "content-type": "application/json" } : {}),
        },
        ...(withBody ? { body: "{}" } : {}),
      });
    }
  }
  return out;
}

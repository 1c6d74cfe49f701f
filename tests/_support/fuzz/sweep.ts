// Every method on every path: the document's paths (real ids, a valid key,
// a `{}` body where a body is allowed), the Meta webhook and unknown paths.
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
  for (
    const url of [
      "/meta/webhook",
      "/api/v2/unknown",
      "/api/v1/webhook-subscriptions",
    ]
  ) {
    urls.push({ label: url, url });
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

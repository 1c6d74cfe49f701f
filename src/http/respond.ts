import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { AppEnv } from "./env.ts";

/**
 * The success envelope: `{ data, meta: { requestId, ...extra } }`.
 * Typed loosely on purpose: the OpenAPI test checks real responses against
 * the document, which is stricter than the handler's static type.
 */
export function ok<T>(
  c: Context<AppEnv>,
  data: T,
  options: { status?: ContentfulStatusCode; meta?: Record<string, unknown> } =
    {},
): never {
  return c.json(
    { data, meta: { requestId: c.get("requestId"), ...options.meta } },
    options.status ?? 200,
  ) as never;
}

import {
  createRoute,
  OpenAPIHono,
  type RouteConfig,
  z,
} from "@hono/zod-openapi";
import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import type { Scope } from "../domain/accounts/scopes.ts";
import type { AppEnv } from "./env.ts";
import { requireScope, type ScopeOptions } from "./auth.ts";
import { NUL_PROBLEM, nulPath } from "../text.ts";

export interface ZodIssueLike {
  path: PropertyKey[];
  message: string;
  code?: string;
}

const TARGET_NAMES: Record<string, string> = {
  json: "request body",
  query: "query parameter",
  param: "path parameter",
  header: "header",
};

/** Turns zod issues into one readable sentence plus a details list. */
export function validationError(
  target: string,
  issues: ZodIssueLike[],
): AppError {
  const where = TARGET_NAMES[target] ?? target;
  const details = issues.map((i) => ({
    path: i.path.map(String).join("."),
    message: i.message,
  }));
  const first = details[0];
  const message = first
    ? first.path
      ? `Invalid ${where} "${first.path}": ${first.message}`
      : `Invalid ${where}: ${first.message}`
    : `Invalid ${where}`;
  return new AppError("VALIDATION_ERROR", message, { details });
}

/**
 * Refuses (400, naming the field) validated input holding a NUL in a string
 * or key: node:sqlite would store it and read it back cut (src/text.ts).
 * `parsedLater` names body fields the domain parses and checks itself, item
 * by item (a batch's messages: one bad item fails alone).
 */
function refuseNul(
  target: string,
  data: unknown,
  parsedLater: readonly string[] = [],
): void {
  let value = data;
  if (parsedLater.length > 0 && typeof data === "object" && data !== null) {
    value = Object.fromEntries(
      Object.entries(data).filter(([k]) => !parsedLater.includes(k)),
    );
  }
  const path = nulPath(value);
  if (path) throw validationError(target, [{ path, message: NUL_PROBLEM }]);
}

/**
 * A router whose validation failures become VALIDATION_ERROR (400), and
 * whose validated input holds no NUL (refuseNul; `parsedLater` as there).
 */
export function newRouter(
  options: { parsedLater?: readonly string[] } = {},
): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({
    defaultHook: (result, _c) => {
      const target = (result as { target?: string }).target ?? "json";
      if (!result.success) {
        throw validationError(target, result.error.issues);
      }
      const later = target === "json" ? options.parsedLater : undefined;
      refuseNul(target, result.data, later);
    },
  });
}

/** `schema.parse(value)` for plain Hono routes: VALIDATION_ERROR on a bad value or a NUL. */
export function parseOrRefuse<T extends z.ZodType>(
  target: string,
  schema: T,
  value: unknown,
): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationError(target, parsed.error.issues);
  refuseNul(target, parsed.data);
  return parsed.data;
}

/** The query of a route that takes none: any parameter is unknown (400). */
export const NoQuery = z.strictObject({});

/** NoQuery for plain Hono routes outside the document (the panel aliases). */
export const refuseQuery: MiddlewareHandler = async (c, next) => {
  const parsed = NoQuery.safeParse(c.req.query());
  if (!parsed.success) throw validationError("query", parsed.error.issues);
  await next();
};

/**
 * A route that needs `scope` (`options.agents: false`: and refuses agents,
 * see requireScope); the scope also appears in the OpenAPI
 * document. A route without a query schema gets NoQuery, so every route
 * refuses unknown query parameters the same way.
 */
export function defineRoute<
  const R extends Omit<RouteConfig, "security" | "middleware">,
>(scope: Scope, config: R, options: ScopeOptions = {}) {
  const route = createRoute({
    ...config,
    security: [{ bearerAuth: [scope] }],
    middleware: [requireScope(scope, options)] as MiddlewareHandler[],
  });
  // Set after typing: handlers of routes without a query keep their types.
  (route as { request?: object }).request = {
    query: NoQuery,
    ...(config.request as object | undefined),
  };
  return route;
}

export const RequestMeta = z.object({ requestId: z.string() });

/** `{ data, meta }` response documentation for a data schema. */
export function envelope<T extends z.ZodType>(data: T, description: string) {
  return {
    content: {
      "application/json": {
        schema: z.object({ data, meta: RequestMeta }),
      },
    },
    description,
  };
}

export function cursorEnvelope<T extends z.ZodType>(
  item: T,
  description: string,
) {
  return {
    content: {
      "application/json": {
        schema: z.object({
          data: z.array(item),
          meta: RequestMeta.extend({
            cursor: z.string().nullable(),
            hasMore: z.boolean(),
          }),
        }),
      },
    },
    description,
  };
}

export function pageEnvelope<T extends z.ZodType>(
  item: T,
  description: string,
) {
  return {
    content: {
      "application/json": {
        schema: z.object({
          data: z.array(item),
          meta: RequestMeta.extend({
            page: z.number().int(),
            pageSize: z.number().int(),
            total: z.number().int(),
          }),
        }),
      },
    },
    description,
  };
}

export const ErrorResponse = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  }),
  meta: RequestMeta,
}).openapi("Error");

function errorDoc(description: string) {
  return {
    content: { "application/json": { schema: ErrorResponse } },
    description,
  };
}

/** Error responses every authenticated route can give. */
export const COMMON_ERRORS = {
  400: errorDoc("Invalid input"),
  401: errorDoc("Missing, malformed, unknown or revoked key"),
  403: errorDoc("The key lacks the scope"),
  429: errorDoc("Rate limit reached; see Retry-After"),
  500: errorDoc("Internal server error"),
} as const;

export const NOT_FOUND_ERROR = { 404: errorDoc("Not found") } as const;
export const CONFLICT_ERROR = { 409: errorDoc("Conflict") } as const;
export const GONE_ERROR = { 410: errorDoc("No longer available") } as const;
export const UNPROCESSABLE_ERROR = {
  422: errorDoc("Rejected by a business rule"),
} as const;

/** JSON request body documentation (required). */
export function jsonBody<T extends z.ZodType>(schema: T) {
  return {
    content: { "application/json": { schema } },
    required: true,
  };
}

export const IdParam = z.object({
  id: z.uuid({ message: "must be a UUID" }).openapi({
    param: { name: "id", in: "path" },
  }),
});

export const CursorQuery = z.strictObject({
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(50),
});

export const PageQuery = z.strictObject({
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  pageSize: z.coerce.number().int().min(1).max(100).default(20),
});

import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import type { Principal } from "../domain/accounts/account.ts";
import type { Scope } from "../domain/accounts/scopes.ts";
import type { AppEnv } from "./env.ts";

export type Authenticate = (token: string) => Promise<Principal | null>;

/** RFC 7235: the scheme name is case-insensitive and one or more spaces follow it. */
const BEARER_REGEXP = /^bearer +(\S+)$/i;

/**
 * Resolves the bearer credential; 401 for missing, malformed, unknown or
 * revoked ones, with an RFC 6750 challenge. It runs before the body checks,
 * so an anonymous caller learns nothing about them.
 */
export function authentication(
  authenticate: Authenticate,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization");
    if (!header) {
      throw new AppError(
        "UNAUTHORIZED",
        'Missing credentials: send the header "Authorization: Bearer <API key>"',
      );
    }
    const match = BEARER_REGEXP.exec(header);
    if (!match) {
      // Another scheme (Basic...) is a missing bearer credential: no error code.
      if (/^bearer\b/i.test(header)) {
        c.header("WWW-Authenticate", 'Bearer error="invalid_request"');
      }
      throw new AppError(
        "UNAUTHORIZED",
        'Malformed Authorization header: expected "Bearer <API key>"',
      );
    }
    const principal = await authenticate(match[1]!);
    if (!principal) {
      c.header("WWW-Authenticate", 'Bearer error="invalid_token"');
      throw new AppError(
        "UNAUTHORIZED",
        "Invalid API key: it is unknown or has been revoked",
      );
    }
    c.set("principal", principal);
    c.set("log", c.get("log").child({ accountId: principal.accountId }));
    await next();
  };
}

/**
 * User tokens (agents) may only read conversations; API keys need the scope.
 */
export function requireScope(scope: Scope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const principal = c.get("principal");
    const allowed = principal.kind === "key"
      ? principal.scopes.has(scope)
      : scope === "conversations:read";
    if (!allowed) {
      throw new AppError(
        "INSUFFICIENT_SCOPE",
        principal.kind === "key"
          ? `This API key lacks the scope "${scope}"`
          : `User tokens cannot use this endpoint: it needs an API key with the scope "${scope}"`,
        { details: { requiredScope: scope } },
      );
    }
    await next();
  };
}

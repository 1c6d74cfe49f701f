import type { MiddlewareHandler } from "hono";
import { AppError } from "../errors.ts";
import type { Principal } from "../domain/accounts/account.ts";
import { AGENT_SCOPES, type Scope } from "../domain/accounts/scopes.ts";
import type { AppEnv } from "./env.ts";
import {
  assertSameOrigin,
  type SessionAuth,
  sessionIdOf,
} from "./panel_session.ts";

export type Authenticate = (token: string) => Promise<Principal | null>;

/** RFC 7235: the scheme name is case-insensitive and one or more spaces follow it. */
const BEARER_REGEXP = /^bearer +(\S+)$/i;

/**
 * Resolves the bearer credential, or without one the panel session cookie
 * (`sessions`); 401 for missing, malformed, unknown or revoked ones, with an
 * RFC 6750 challenge. It runs before the body checks, so an anonymous
 * caller learns nothing about them.
 */
export function authentication(
  authenticate: Authenticate,
  sessions?: SessionAuth,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header("authorization");
    const sessionId = !header && sessions
      ? sessionIdOf(c, sessions.cookie)
      : undefined;
    if (sessions && sessionId !== undefined) {
      // A panel session: the agent's rights, and proof of our own origin
      // for anything that changes state.
      const principal = await sessions.authenticate(sessionId);
      if (!principal) {
        throw new AppError(
          "UNAUTHORIZED",
          "Panel session expired or signed out: open a new login link",
        );
      }
      assertSameOrigin(c, sessions.origin);
      c.set("principal", principal);
      c.set("log", c.get("log").child({ accountId: principal.accountId }));
      return await next();
    }
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

/** Whether a route admits agents at all (they still need its scope). */
export interface ScopeOptions {
  /** @default true */
  agents?: boolean;
}

/**
 * API keys need the scope; agents (user tokens and panel sessions) need it
 * among AGENT_SCOPES and a route that admits them, and the services narrow
 * what they read and change to the conversations they can see.
 */
export function requireScope(
  scope: Scope,
  options: ScopeOptions = {},
): MiddlewareHandler<AppEnv> {
  const agents = options.agents ?? true;
  return async (c, next) => {
    const principal = c.get("principal");
    const allowed = principal.kind === "key"
      ? principal.scopes.has(scope)
      : agents && AGENT_SCOPES.has(scope);
    if (!allowed) {
      throw new AppError(
        "INSUFFICIENT_SCOPE",
        principal.kind === "key"
          ? `This API key lacks the scope "${scope}"`
          : `Agents cannot use this endpoint: it needs an API key with the scope "${scope}"`,
        { details: { requiredScope: scope } },
      );
    }
    await next();
  };
}

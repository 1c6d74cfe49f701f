// The panel session cookie and the cross-site check of cookie-authenticated
// requests (issue 29): the cookie is HttpOnly and SameSite=Lax, so it rides
// along on top-level navigations from other sites (a CRM opening the resolve
// URL), and every request that changes state must prove it comes from this
// origin.
import type { Context } from "hono";
import { getCookie, setCookie } from "hono/cookie";
import { AppError } from "../errors.ts";
import type { Container } from "../container.ts";
import {
  authenticateSession,
  SESSION_MAX_MS,
  type SessionPrincipal,
} from "../domain/accounts/agent_session_service.ts";

export interface SessionCookie {
  /** `__Host-bm_session` on https (then Secure), `bm_session` on plain-http dev. */
  name: string;
  secure: boolean;
}

/** The cookie's name and Secure flag, from PUBLIC_BASE_URL's scheme. */
export function sessionCookie(
  publicBaseUrl: string | undefined,
): SessionCookie {
  const secure = publicBaseUrl?.startsWith("https:") ?? false;
  return { name: secure ? "__Host-bm_session" : "bm_session", secure };
}

/** PUBLIC_BASE_URL's origin (scheme, host, port), or undefined. */
export function publicOrigin(
  publicBaseUrl: string | undefined,
): string | undefined {
  return publicBaseUrl ? new URL(publicBaseUrl).origin : undefined;
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

export function isSafeMethod(method: string): boolean {
  return SAFE_METHODS.has(method);
}

/**
 * Refuses (403) a request that changes state unless the browser says it
 * comes from this origin: `Sec-Fetch-Site: same-origin`, or else an
 * `Origin` equal to PUBLIC_BASE_URL's. Neither: a form or fetch of another
 * site riding on the cookie.
 */
export function assertSameOrigin(
  c: Context,
  origin: string | undefined,
): void {
  if (isSafeMethod(c.req.method)) return;
  if (c.req.header("sec-fetch-site") === "same-origin") return;
  const from = c.req.header("origin");
  if (from !== undefined && origin !== undefined && from === origin) return;
  throw new AppError(
    "FORBIDDEN",
    "Cross-site request refused: a request authenticated by the panel session must come from the panel's own origin (Sec-Fetch-Site: same-origin, or Origin equal to PUBLIC_BASE_URL's)",
  );
}

/** How the API's authentication reads a panel session. */
export interface SessionAuth {
  cookie: SessionCookie;
  origin: string | undefined;
  authenticate(sessionId: string): Promise<SessionPrincipal | null>;
}

export function sessionAuth(container: Container): SessionAuth {
  const base = container.config.publicBaseUrl;
  return {
    cookie: sessionCookie(base),
    origin: publicOrigin(base),
    authenticate: (id) => authenticateSession(container, id),
  };
}

/** The session id the request's cookie carries, if any. */
export function sessionIdOf(
  c: Context,
  cookie: SessionCookie,
): string | undefined {
  return getCookie(c, cookie.name);
}

/** Sets (or, with null, clears) the session cookie: HttpOnly, SameSite=Lax, Path=/. */
export function writeSessionCookie(
  c: Context,
  cookie: SessionCookie,
  sessionId: string | null,
): void {
  setCookie(c, cookie.name, sessionId ?? "", {
    path: "/",
    httpOnly: true,
    sameSite: "Lax",
    secure: cookie.secure,
    // The session's own end is kept on the server (idle 12 h, absolute 30 d).
    maxAge: sessionId === null ? 0 : SESSION_MAX_MS / 1000,
  });
}

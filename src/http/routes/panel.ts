// The inbox panel under /panel (issue 29): the app shell and its embedded
// assets, sign-in by one-time link into a cookie session, logout, the
// resolve URL of the spec, same-origin media and the event stream. Every
// action of the page itself is a call to the public API (/api/v2, /api/v1),
// authenticated by the same session.
import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import type { Container } from "../../container.ts";
import { AppError } from "../../errors.ts";
import {
  authenticateSession,
  peekLoginLink,
  type SessionPrincipal,
  signIn,
  signOut,
} from "../../domain/accounts/agent_session_service.ts";
import { viewerOf } from "../../domain/conversations/conversation.ts";
import {
  listInbox,
  resolveConversation,
} from "../../domain/conversations/conversation_service.ts";
import { feedHead } from "../../domain/events/event_service.ts";
import { openVisibleMedia } from "../../domain/media/media_service.ts";
import { mediaResponse } from "./media_download.ts";
import type { AppEnv } from "../env.ts";
import {
  assertSameOrigin,
  publicOrigin,
  sessionCookie,
  sessionIdOf,
  writeSessionCookie,
} from "../panel_session.ts";
import type { RateLimiter } from "../rate_limit.ts";
import {
  ResolveQuery,
  toConversationResponse,
} from "../schemas/conversation_schemas.ts";
import { linkHelpPage, loginPage, pageLang, shellPage } from "./panel_pages.ts";
import { type PanelEvents, panelEventsRoute } from "./panel_events.ts";
import type { PanelAsset } from "../../panel/assets.ts";

/** The panel's policy, exactly: nothing but this origin, no inline script or style, no framing. */
export const PANEL_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/** The embedded assets, loaded (and hashed) on the first panel request. */
const loadAssets = async () =>
  (await import("../../panel/assets.ts")).panelAssets();

/** `next` after sign-in: only a path under /panel/, never another origin. */
export function safeNext(next: string | undefined): string | undefined {
  if (!next || !next.startsWith("/panel/")) return undefined;
  if (/[\\\s]/.test(next) || next.includes("//")) return undefined;
  const url = new URL(next, "http://panel.invalid");
  return url.origin === "http://panel.invalid" &&
      url.pathname.startsWith("/panel/")
    ? url.pathname + url.search
    : undefined;
}

async function gzip(bytes: Uint8Array): Promise<Uint8Array> {
  const stream = new Blob([bytes as BlobPart]).stream().pipeThrough(
    new CompressionStream("gzip"),
  );
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

export interface PanelOptions {
  /** The API's rate limiter: a session draws from its agent's one bucket. */
  limiter: RateLimiter;
  /** Open event streams, closed at shutdown and when their session ends. */
  events: PanelEvents;
}

export function panelRoutes(
  container: Container,
  options: PanelOptions,
): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  const cookie = sessionCookie(container.config.publicBaseUrl);
  const origin = publicOrigin(container.config.publicBaseUrl);
  const assets = container.parts.once("panel assets", loadAssets);
  const css = async () => (await assets()).css.name;

  app.use("/panel", headers);
  app.use("/panel/*", headers);

  /** The session's principal, or undefined (no cookie, or ended). */
  async function session(
    c: Context<AppEnv>,
  ): Promise<SessionPrincipal | undefined> {
    const id = sessionIdOf(c, cookie);
    if (id === undefined) return undefined;
    return await authenticateSession(container, id) ?? undefined;
  }

  /** The session, or 401 for the routes the page calls (media, events). */
  async function requireSession(c: Context<AppEnv>, next: () => Promise<void>) {
    const principal = await session(c);
    if (!principal) {
      throw new AppError(
        "UNAUTHORIZED",
        "Panel session expired or signed out: open a new login link",
      );
    }
    c.set("principal", principal);
    await next();
  }

  app.get("/panel/assets/:name", async (c) => {
    const { js, css } = await assets();
    const asset: PanelAsset | undefined = [js, css].find((a) =>
      a.name === c.req.param("name")
    );
    if (!asset) {
      throw new AppError(
        "NOT_FOUND",
        `Cannot find panel asset "${c.req.param("name")}"`,
      );
    }
    const headers: Record<string, string> = {
      "content-type": asset.type,
      "cache-control": "public, max-age=31536000, immutable",
      vary: "Accept-Encoding",
    };
    if (/\bgzip\b/.test(c.req.header("accept-encoding") ?? "")) {
      asset.gzipped ??= await gzip(asset.body);
      headers["content-encoding"] = "gzip";
      return c.body(asset.gzipped as Uint8Array<ArrayBuffer>, 200, headers);
    }
    return c.body(asset.body as Uint8Array<ArrayBuffer>, 200, headers);
  });

  app.get("/panel/login", async (c) => {
    const lang = pageLang(c.req.header("accept-language"));
    const token = c.req.query("token") ?? "";
    const agent = await peekLoginLink(container, token);
    if (!agent) return c.html(linkHelpPage(lang, await css(), "badLink"), 410);
    return c.html(
      loginPage(lang, await css(), {
        token,
        agentName: agent.name,
        next: safeNext(c.req.query("next")),
      }),
    );
  });

  app.post(
    "/panel/login",
    bodyLimit({ maxSize: 4096 }),
    async (c) => {
      assertSameOrigin(c, origin);
      const form = await c.req.parseBody();
      const token = typeof form.token === "string" ? form.token : "";
      const started = await signIn(container, token);
      if (!started) {
        const lang = pageLang(c.req.header("accept-language"));
        return c.html(linkHelpPage(lang, await css(), "badLink"), 410);
      }
      writeSessionCookie(c, cookie, started.sessionId);
      const next = safeNext(
        typeof form.next === "string" ? form.next : undefined,
      );
      return c.redirect(next ?? "/panel", 303);
    },
  );

  app.post("/panel/logout", async (c) => {
    assertSameOrigin(c, origin);
    const principal = await session(c);
    if (principal) {
      await signOut(container, principal.sessionHash);
      options.events.closeSession(principal.sessionHash);
    }
    writeSessionCookie(c, cookie, null);
    const lang = pageLang(c.req.header("accept-language"));
    return c.html(linkHelpPage(lang, await css(), "signedOut"));
  });

  app.get(
    "/panel/events",
    requireSession,
    options.limiter.middleware(),
    panelEventsRoute(container, options.events),
  );

  app.get(
    "/panel/media/:id",
    requireSession,
    options.limiter.middleware(),
    async (c) => {
      const file = await openVisibleMedia(
        container,
        viewerOf(c.get("principal")),
        c.req.param("id"),
      );
      return mediaResponse(file, {
        "cache-control": "private, max-age=3600",
        "content-security-policy": PANEL_CSP,
        "referrer-policy": "no-referrer",
      });
    },
  );

  /** The spec's panel URL: straight to the one match, else the page shows the choice. */
  app.get("/panel/conversations/resolve", async (c, next) => {
    const principal = await session(c);
    if (!principal) return await next();
    const parsed = ResolveQuery.safeParse(c.req.query());
    if (parsed.success) {
      const found = await resolveConversation(container, {
        viewer: viewerOf(principal),
        ...parsed.data,
      }).catch((err) => {
        if (err instanceof AppError && err.code !== "INTERNAL_ERROR") {
          return undefined; // the page shows the API's own answer
        }
        throw err;
      });
      if (found?.conversationId && found.alternatives.length === 0) {
        return c.redirect(`/panel/c/${found.conversationId}`, 302);
      }
    }
    return await next();
  });

  const shell = async (c: Context<AppEnv>) => {
    const lang = pageLang(c.req.header("accept-language"));
    const principal = await session(c);
    if (!principal) {
      return c.html(linkHelpPage(lang, await css(), "signInNeeded"));
    }
    const { js, css: style } = await assets();
    // The cursor first: an event after it and before the list's read shows
    // twice at worst (applying one is idempotent), never not at all.
    const feedCursor = await feedHead(container, principal.accountId);
    const first = await listInbox(container, {
      viewer: viewerOf(principal),
      limit: 50,
    });
    return c.html(
      shellPage(lang, { js: js.name, css: style.name }, {
        agent: {
          id: principal.agentId,
          name: principal.name,
          visibility: principal.visibility,
        },
        accountId: principal.accountId,
        feedCursor,
        serverTime: container.clock.now().toISOString(),
        list: {
          data: first.items.map(toConversationResponse),
          cursor: first.cursor,
          hasMore: first.hasMore,
        },
      }),
    );
  };
  app.get("/panel", shell);
  app.get("/panel/*", shell);
  return app;
}

/** Headers of every panel response: the CSP, no referrer, no sniffing, no caching of pages. */
async function headers(c: Context<AppEnv>, next: () => Promise<void>) {
  await next();
  if (!c.res.headers.has("content-security-policy")) {
    c.header("Content-Security-Policy", PANEL_CSP);
  }
  c.header("Referrer-Policy", "no-referrer");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Cross-Origin-Opener-Policy", "same-origin");
  if (!c.res.headers.has("cache-control")) {
    c.header("Cache-Control", "no-store");
  }
}

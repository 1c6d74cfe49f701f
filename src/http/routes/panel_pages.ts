// The panel's server-rendered pages: the app shell (the client takes over),
// and the few pages that must work without a session and without script:
// how to get a sign-in link, the link's "Sign in" button, signed out.
// Every value is escaped by hono/html; the boot data is JSON with `<`
// escaped, in a data block (not executed, so the CSP allows it).
import { html, raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

export type PageLang = "en" | "es";

/** English or Spanish, from Accept-Language (the client has its own catalogs). */
export function pageLang(acceptLanguage: string | undefined): PageLang {
  const first = (acceptLanguage ?? "").split(",")[0]?.trim().toLowerCase();
  return first?.startsWith("es") ? "es" : "en";
}

const TEXT = {
  en: {
    title: "Inbox",
    signInTitle: "Sign in to the inbox",
    signIn: "Sign in",
    signInAs: (name: string) => `You are signing in as ${name}.`,
    linkOnce: "This link works once and for 10 minutes.",
    noSession: "You are not signed in.",
    howToGet:
      "Agents sign in with a one-time link. Ask your administrator for one; they make it with:",
    badLink: "This sign-in link has expired or was already used.",
    askNew: "Ask your administrator for a new one:",
    signedOut: "You are signed out.",
  },
  es: {
    title: "Bandeja de entrada",
    signInTitle: "Entrar a la bandeja de entrada",
    signIn: "Entrar",
    signInAs: (name: string) => `Vas a entrar como ${name}.`,
    linkOnce: "Este enlace sirve una vez y durante 10 minutos.",
    noSession: "No iniciaste sesión.",
    howToGet:
      "Los agentes entran con un enlace de un solo uso. Pedile uno a quien administra el servidor; se hace con:",
    badLink: "Este enlace para entrar venció o ya se usó.",
    askNew: "Pedí uno nuevo a quien administra el servidor:",
    signedOut: "Cerraste la sesión.",
  },
};

const CLI =
  "deno run -A main.ts agents login-link --account <account> --name <agent>";

type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The document up to `<body>`: no inline script or style (the CSP allows none). */
function head(lang: PageLang, title: string, css: string, script?: string) {
  return html`
    <!doctype html>
    <html lang="${lang}">
      <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="color-scheme" content="light dark">
        <title>${title}</title>
        <link rel="icon" href="data:,">
    <link rel="stylesheet" href="/panel/assets/${css}">
        ${script
          ? html`<script type="module" src="/panel/assets/${script}"></script>`
          : ""}
          </head>
  `;
}

function page(lang: PageLang, css: string, title: string, body: Html) {
  return html`
    ${head(lang, title, css)}
    <body class="page">
      <main class="card">${body}</main>
    </body>
    </html>
  `;
}

/**
 * The pages that say how to get a sign-in link: `signInNeeded` (any panel
 * URL without a session), `badLink` (a link unknown, used, expired or of a
 * revoked agent), `signedOut` (after POST /panel/logout).
 */
export function linkHelpPage(
  lang: PageLang,
  css: string,
  kind: "signInNeeded" | "badLink" | "signedOut",
) {
  const t = TEXT[lang];
  const [heading, said, next] = kind === "signInNeeded"
    ? [t.signInTitle, t.noSession, t.howToGet]
    : kind === "badLink"
    ? [t.signInTitle, t.badLink, t.askNew]
    : [t.signedOut, "", t.howToGet];
  return page(
    lang,
    css,
    heading,
    html`<h1>${heading}</h1>
${
      said
        ? html`<p role="${kind === "badLink" ? "alert" : "status"}">${said}</p>`
        : ""
    }
<p>${next}</p>
<pre><code>${CLI}</code></pre>`,
  );
}

/** GET /panel/login?token=…: the button that signs in (a POST, so link previews cannot use the link up). */
export function loginPage(
  lang: PageLang,
  css: string,
  input: { token: string; agentName: string; next: string | undefined },
) {
  const t = TEXT[lang];
  return page(
    lang,
    css,
    t.signInTitle,
    html`<h1>${t.signInTitle}</h1>
<p>${t.signInAs(input.agentName)}</p>
<form method="post" action="/panel/login">
<input type="hidden" name="token" value="${input.token}">
${
      input.next
        ? html`<input type="hidden" name="next" value="${input.next}">`
        : ""
    }
<button type="submit" class="primary">${t.signIn}</button>
</form>
<p class="muted">${t.linkOnce}</p>`,
  );
}

/** What the client reads at start, from `<script type="application/json" id="boot">`. */
export interface BootData {
  agent: { id: string; name: string; visibility: "all" | "assigned" };
  accountId: string;
  /** The event feed's position when the page was made: the stream resumes after it. */
  feedCursor: string | null;
  /** The server's clock (ISO), so countdowns do not trust the browser's. */
  serverTime: string;
  /**
   * The first page of GET /api/v1/conversations (no filter), read with the
   * page, so the list paints without another round trip.
   */
  list: { data: unknown[]; cursor: string | null; hasMore: boolean };
}

/** JSON safe inside a script element: no `</script>`, no `<!--`. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c");
}

/** The app shell: the client renders everything inside #app. */
export function shellPage(
  lang: PageLang,
  assets: { js: string; css: string },
  boot: BootData,
) {
  return html`
    ${head(lang, TEXT[lang].title, assets.css, assets.js)}
    <body>
      <div id="app"></div>
      <script type="application/json" id="boot">${raw(
        scriptJson(boot),
      )}</script>
    </body>
    </html>
  `;
}

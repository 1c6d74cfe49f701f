// Panel sign-in (issue 29): a one-time link, a "Sign in" button that POSTs,
// a cookie session with the agent's rights and the cross-site check.
import assert from "node:assert/strict";
import { createHarness, type Harness } from "../_harness.ts";
import type { ManualClock } from "../../src/clock.ts";
import {
  createAgent,
  revokeAgent,
} from "../../src/domain/accounts/account_service.ts";
import { createLoginLink } from "../../src/domain/accounts/agent_session_service.ts";
import { safeNext } from "../../src/http/routes/panel.ts";

const ORIGIN = "http://localhost";

async function agentOf(h: Harness, visibility: "all" | "assigned" = "all") {
  return await createAgent(h.container, {
    accountId: h.tenant.account.id,
    name: "Ana <b>",
    visibility,
  });
}

function form(fields: Record<string, string>) {
  return new URLSearchParams(fields).toString();
}

/** Signs in with a fresh link; returns the Set-Cookie header and the cookie to send. */
async function signIn(
  h: Harness,
  agent: { id: string; accountId: string },
  extra: Record<string, string> = {},
) {
  const { token } = await createLoginLink(h.container, agent);
  const res = await h.request("POST", "/panel/login", {
    key: null,
    rawBody: form({ token, ...extra }),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "sec-fetch-site": "same-origin",
    },
  });
  const setCookie = res.headers.get("set-cookie") ?? "";
  return { res, setCookie, cookie: setCookie.split(";")[0]!, token };
}

Deno.test("a login link shows a Sign in button, works once, and starts an HttpOnly Lax session", async () => {
  await using h = await createHarness();
  const { agent } = await agentOf(h);
  const { token } = await createLoginLink(h.container, agent);
  const page = await h.request("GET", `/panel/login?token=${token}`, {
    key: null,
  });
  assert.equal(page.status, 200);
  assert.match(
    page.body,
    /<button type="submit" class="primary">Sign in<\/button>/,
  );
  // The name is escaped, the token only in the form.
  assert.match(page.body, /Ana &lt;b&gt;/);
  assert.match(page.body, new RegExp(`name="token" value="${token}"`));
  assert.equal(
    page.headers.get("content-security-policy"),
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' blob: data:; media-src 'self' blob:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  );
  assert.equal(page.headers.get("referrer-policy"), "no-referrer");
  assert.equal(page.headers.get("x-content-type-options"), "nosniff");
  // Looking at the page does not use the link up.
  const again = await h.request("GET", `/panel/login?token=${token}`, {
    key: null,
  });
  assert.equal(again.status, 200);

  const post = (headers: Record<string, string>) =>
    h.request("POST", "/panel/login", {
      key: null,
      rawBody: form({ token, next: "/panel/c/123" }),
      headers: {
        "content-type": "application/x-www-form-urlencoded",
        ...headers,
      },
    });
  // Another site's form cannot sign anyone in.
  assert.equal((await post({ "sec-fetch-site": "cross-site" })).status, 403);
  assert.equal((await post({ origin: "https://evil.example" })).status, 403);
  const signed = await post({ origin: ORIGIN });
  assert.equal(signed.status, 303);
  assert.equal(signed.headers.get("location"), "/panel/c/123");
  const setCookie = signed.headers.get("set-cookie")!;
  assert.match(setCookie, /^bm_session=[0-9A-Za-z]{43}; /);
  assert.match(setCookie, /HttpOnly/);
  assert.match(setCookie, /SameSite=Lax/);
  assert.match(setCookie, /Path=\//);
  assert.doesNotMatch(setCookie, /Secure/);
  // Once only.
  const reused = await post({ origin: ORIGIN });
  assert.equal(reused.status, 410);
  assert.match(reused.body, /expired or was already used/);
  // Only the hash of the session id is stored.
  const id = setCookie.split(";")[0]!.split("=")[1]!;
  const rows = await h.container.db.selectFrom("agent_sessions").selectAll()
    .execute();
  assert.equal(rows.length, 1);
  assert.notEqual(rows[0]!.id_hash, id);
  assert.equal(rows[0]!.id_hash.length, 64);
});

Deno.test("on https the cookie is __Host-bm_session and Secure", async () => {
  await using h = await createHarness({
    env: { PUBLIC_BASE_URL: "https://inbox.example.com" },
  });
  const { agent } = await agentOf(h);
  const { setCookie } = await signIn(h, agent);
  assert.match(setCookie, /^__Host-bm_session=/);
  assert.match(setCookie, /; Secure/);
  assert.doesNotMatch(setCookie, /Domain=/);
});

Deno.test("a session has its agent's rights on the API, and changes state only from this origin", async () => {
  await using h = await createHarness();
  const { agent } = await agentOf(h, "assigned");
  const { cookie } = await signIn(h, agent);
  const call = (method: string, path: string, headers = {}, body?: unknown) =>
    h.request(method, path, {
      key: null,
      headers: { cookie, ...headers },
      ...(body !== undefined ? { body } : {}),
    });
  const list = await call("GET", "/api/v2/conversations");
  assert.equal(list.status, 200);
  assert.equal(list.headers.get("x-ratelimit-limit"), "600");
  assert.equal((await call("GET", "/api/v2/webhooks")).status, 403);
  const body = { status: "pending" };
  const id = crypto.randomUUID();
  // Cross-site: refused before anything else.
  const cross = await call("PATCH", `/api/v2/conversations/${id}`, {
    "sec-fetch-site": "cross-site",
  }, body);
  assert.equal(cross.status, 403);
  assert.equal(cross.body.error.code, "FORBIDDEN");
  const none = await call("PATCH", `/api/v2/conversations/${id}`, {}, body);
  assert.equal(none.status, 403);
  // Same origin, by Sec-Fetch-Site or Origin: on to the route (a 404 here).
  const same = await call("PATCH", `/api/v2/conversations/${id}`, {
    "sec-fetch-site": "same-origin",
  }, body);
  assert.equal(same.status, 404);
  const byOrigin = await call("PATCH", `/api/v2/conversations/${id}`, {
    origin: ORIGIN,
  }, body);
  assert.equal(byOrigin.status, 404);
  // A bearer request is not cookie-authenticated: no origin needed.
  const keyed = await h.request("PATCH", `/api/v2/conversations/${id}`, {
    body,
  });
  assert.equal(keyed.status, 404);
});

Deno.test("logout, revoking the agent, 12 idle hours and 30 days each end a session", async () => {
  await using h = await createHarness();
  const clock = h.clock as ManualClock;
  const { agent } = await agentOf(h);
  const me = (cookie: string) =>
    h.request("GET", "/api/v2/conversations", {
      key: null,
      headers: { cookie },
    });

  const a = await signIn(h, agent);
  assert.equal((await me(a.cookie)).status, 200);
  const out = await h.request("POST", "/panel/logout", {
    key: null,
    headers: { cookie: a.cookie, "sec-fetch-site": "same-origin" },
  });
  assert.equal(out.status, 200);
  assert.match(out.headers.get("set-cookie")!, /Max-Age=0/);
  assert.equal((await me(a.cookie)).status, 401);

  const b = await signIn(h, agent);
  clock.advance(11 * 3600_000);
  assert.equal((await me(b.cookie)).status, 200);
  clock.advance(11 * 3600_000); // 11 h after its last use: still on
  assert.equal((await me(b.cookie)).status, 200);
  clock.advance(12 * 3600_000 + 1000);
  assert.equal((await me(b.cookie)).status, 401);

  const c = await signIn(h, agent);
  for (let day = 0; day < 30; day++) {
    assert.equal((await me(c.cookie)).status, 200, `day ${day}`);
    clock.advance(11 * 3600_000);
    assert.equal((await me(c.cookie)).status, 200);
    clock.advance(11 * 3600_000);
  }
  clock.advance(3 * 24 * 3600_000);
  assert.equal((await me(c.cookie)).status, 401, "30 days after sign-in");

  const d = await signIn(h, agent);
  const link = await createLoginLink(h.container, agent);
  await revokeAgent(h.container, agent.id);
  assert.equal((await me(d.cookie)).status, 401);
  const page = await h.request("GET", `/panel/login?token=${link.token}`, {
    key: null,
  });
  assert.equal(page.status, 410);
});

Deno.test("a login link expires after 10 minutes", async () => {
  await using h = await createHarness();
  const { agent } = await agentOf(h);
  const { token } = await createLoginLink(h.container, agent);
  (h.clock as ManualClock).advance(10 * 60_000);
  const res = await h.request("POST", "/panel/login", {
    key: null,
    rawBody: form({ token }),
    headers: {
      "content-type": "application/x-www-form-urlencoded",
      "sec-fetch-site": "same-origin",
    },
  });
  assert.equal(res.status, 410);
  assert.equal(res.headers.get("set-cookie"), null);
});

Deno.test("next is honoured only for paths under /panel/", () => {
  assert.equal(safeNext("/panel/c/1?x=2"), "/panel/c/1?x=2");
  assert.equal(
    safeNext("/panel/conversations/resolve?phone=%2B54"),
    "/panel/conversations/resolve?phone=%2B54",
  );
  for (
    const bad of [
      undefined,
      "",
      "/panel",
      "/api/v2/account",
      "https://evil.example/panel/",
      "//evil.example/panel/",
      "/panel//evil.example",
      "/panel/\\evil",
      "/panel/../api/v2",
      "/panel/%2e%2e/api",
    ]
  ) {
    const got = safeNext(bad);
    assert.ok(
      got === undefined || got.startsWith("/panel/"),
      `${bad} -> ${got}`,
    );
    if (bad?.includes("evil") || bad?.includes("..")) {
      assert.ok(got === undefined || !got.includes("evil"), `${bad}`);
    }
  }
  assert.equal(safeNext("/panel/../api/v2"), undefined);
});

Deno.test("GET /panel without a session says how to get a link", async () => {
  await using h = await createHarness();
  const res = await h.request("GET", "/panel", { key: null });
  assert.equal(res.status, 200);
  assert.match(res.body, /agents login-link --account/);
  assert.equal(res.headers.get("cache-control"), "no-store");
  const es = await h.request("GET", "/panel", {
    key: null,
    headers: { "accept-language": "es-AR,es;q=0.9" },
  });
  assert.match(es.body, /lang="es"/);
  assert.match(es.body, /No iniciaste sesión/);
});

Deno.test("an agent's token and its panel sessions draw from one rate-limit bucket", async () => {
  await using h = await createHarness({ env: { AGENT_RATE_LIMIT: "3" } });
  const { agent, token } = await agentOf(h);
  const { cookie } = await signIn(h, agent);
  const byToken = () => h.request("GET", "/api/v2/account", { key: token });
  const bySession = () =>
    h.request("GET", "/api/v2/account", { key: null, headers: { cookie } });
  assert.equal((await byToken()).status, 200);
  assert.equal((await bySession()).status, 200);
  assert.equal((await byToken()).status, 200);
  const refused = await bySession();
  assert.equal(refused.status, 429);
  assert.equal(refused.body.error.code, "RATE_LIMITED");
  assert.equal((await byToken()).status, 429);
});

// The bearer scheme per RFC 7235/6750, and authentication ahead of the body
// checks: an anonymous caller learns nothing from 413 or 415.
import assert from "node:assert/strict";
import { createHarness } from "../_harness.ts";
import { API_PREFIX, assertErrorBody } from "./_routes.ts";

const CONTACTS = `${API_PREFIX}/contacts`;

Deno.test("the Bearer scheme name is case-insensitive", async () => {
  await using h = await createHarness();
  for (const scheme of ["Bearer", "bearer", "BEARER", "bEaReR"]) {
    for (const gap of [" ", "  "]) {
      const res = await h.request("GET", `${API_PREFIX}/account`, {
        key: null,
        headers: { authorization: `${scheme}${gap}${h.tenant.key}` },
      });
      assert.equal(res.status, 200, `"${scheme}${gap}<key>"`);
    }
  }
});

Deno.test("every 401 carries a WWW-Authenticate Bearer challenge", async () => {
  await using h = await createHarness();
  const unknown = `bmk_${"A1b2C3d4E5".repeat(4)}`;
  const cases: [string, Record<string, string>, string][] = [
    ["no credentials", {}, "Bearer"],
    ["another scheme", { authorization: "Basic dXNlcjpwYXNz" }, "Bearer"],
    ["a bearer without token", { authorization: "bearer" }, "invalid_request"],
    ["two tokens", {
      authorization: `Bearer ${h.tenant.key} x`,
    }, "invalid_request"],
    ["an unknown key", { authorization: `BEARER ${unknown}` }, "invalid_token"],
  ];
  for (const [what, headers, expected] of cases) {
    const res = await h.request("GET", `${API_PREFIX}/account`, {
      key: null,
      headers,
    });
    assertErrorBody(res, 401, "UNAUTHORIZED", what);
    assert.equal(
      res.headers.get("www-authenticate"),
      expected === "Bearer" ? "Bearer" : `Bearer error="${expected}"`,
      what,
    );
  }
});

Deno.test("an anonymous POST gets 401, not 413 or 415, while a keyed one still gets them", async () => {
  await using h = await createHarness({ env: { BODY_LIMIT_BYTES: "2048" } });
  const oversize = JSON.stringify({
    phoneNumber: "+5491122334455",
    name: "x".repeat(3000),
  });
  const requests: [string, number, string, Record<string, string>, string][] = [
    ["oversize JSON", 413, "PAYLOAD_TOO_LARGE", {
      "content-type": "application/json",
    }, oversize],
    ["text/plain", 415, "UNSUPPORTED_MEDIA_TYPE", {
      "content-type": "text/plain",
    }, '{"phoneNumber":"+5491122334455"}'],
    ["oversize text/plain", 413, "PAYLOAD_TOO_LARGE", {
      "content-type": "text/plain",
    }, oversize],
  ];
  for (const [what, status, code, headers, rawBody] of requests) {
    const anonymousHeaders: Record<string, string>[] = [
      {},
      { authorization: "Bearer nope" },
    ];
    for (const anonymous of anonymousHeaders) {
      const res = await h.request("POST", CONTACTS, {
        key: null,
        rawBody,
        headers: { ...headers, ...anonymous },
      });
      assertErrorBody(res, 401, "UNAUTHORIZED", `anonymous ${what}`);
      assert.match(res.headers.get("www-authenticate") ?? "", /^Bearer\b/);
    }
    const keyed = await h.request("POST", CONTACTS, { rawBody, headers });
    assertErrorBody(keyed, status, code, `keyed ${what}`);
  }
  assert.equal((await h.request("GET", CONTACTS)).body.meta.total, 0);
});

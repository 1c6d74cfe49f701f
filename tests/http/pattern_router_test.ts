// The lazy route groups' router (src/http/pattern_router.ts) must answer
// every path as Hono's TrieRouter, which it replaces where RegExpRouter
// gives up, does: same handlers, same order, same parameters.
import assert from "node:assert/strict";
import type { Router } from "hono/router";
import { TrieRouter } from "hono/router/trie-router";
import { appRouter } from "../../src/http/pattern_router.ts";

/** Routes shaped like the API's: middleware, statics beside parameters, nested parameters, regex parameters, wildcards. */
const ROUTES: [string, string][] = [
  ["ALL", "*"],
  ["ALL", "/api/v2/*"],
  ["POST", "/api/v2/messages"],
  ["POST", "/api/v2/messages/batch"],
  ["GET", "/api/v2/messages/:id"],
  ["POST", "/api/v2/messages/:waMessageId/read"],
  ["GET", "/api/v2/contacts"],
  ["GET", "/api/v2/contacts/:id"],
  ["PATCH", "/api/v2/contacts/:id"],
  ["GET", "/api/v2/contacts/:contactId/conversations"],
  ["POST", "/api/v2/conversations/:id/resolve"],
  ["GET", "/api/v2/conversations/:id/messages"],
  ["GET", "/api/v2/media/:id{[0-9a-f-]+}"],
  ["GET", "/api/v2/files/*"],
  ["GET", "/api/v2/events/:type?"],
];

const PATHS: [string, string][] = [
  ["POST", "/api/v2/messages"],
  ["POST", "/api/v2/messages/"],
  ["POST", "/api/v2/messages/batch"],
  ["POST", "/api/v2/messages/batch/"],
  ["GET", "/api/v2/messages/batch"],
  ["GET", "/api/v2/messages/abc"],
  ["GET", "/api/v2/messages/abc/"],
  ["POST", "/api/v2/messages/wamid.HBgL%2Fx/read"],
  ["POST", "/api/v2/messages//read"],
  ["GET", "/api/v2/contacts"],
  ["GET", "/api/v2/contacts/"],
  ["PATCH", "/api/v2/contacts/c1"],
  ["GET", "/api/v2/contacts/c1/conversations"],
  ["GET", "/api/v2/contacts/c1/conversations/x"],
  ["POST", "/api/v2/conversations/v1/resolve"],
  ["GET", "/api/v2/conversations/v1/messages"],
  ["GET", "/api/v2/media/0a-1b"],
  ["GET", "/api/v2/media/zz"],
  ["GET", "/api/v2/files/a/b/c"],
  ["GET", "/api/v2/files"],
  ["GET", "/api/v2/events"],
  ["GET", "/api/v2/events/message.sent"],
  ["GET", "/api/v2"],
  ["GET", "/api/v2/"],
  ["DELETE", "/nothing/here"],
  ["GET", "/"],
];

function answers(router: Router<string>): unknown[] {
  ROUTES.forEach(([method, path], i) =>
    router.add(method, path, `${i} ${method} ${path}`)
  );
  return PATHS.map(([method, path]) => {
    const [handlers] = router.match(method, path);
    return [
      `${method} ${path}`,
      handlers.map(([h, params]) => [h, { ...(params as object) }]),
    ];
  });
}

Deno.test("the route groups' router answers every path as TrieRouter does", () => {
  const router = appRouter<string>();
  const expected = answers(new TrieRouter<string>());
  assert.deepEqual(answers(router), expected);
  // These routes are the ones RegExpRouter refuses: the pattern router answered.
  assert.equal(
    (router as unknown as { activeRouter: { name: string } }).activeRouter.name,
    "StrictPatternRouter",
  );
  // And the trailing slash stays significant (no route of its own matches it).
  const slashed = expected.find((a) =>
    (a as [string])[0] === "POST /api/v2/messages/"
  ) as [string, [string][]];
  assert.deepEqual(slashed[1].map(([h]) => h), ["0 ALL *", "1 ALL /api/v2/*"]);
});

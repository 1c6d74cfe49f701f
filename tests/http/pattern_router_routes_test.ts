// The lazy route groups' router (src/http/pattern_router.ts) over the API's
// own routes, not the shapes of pattern_router_test.ts: for every route of
// every /api/v2 and /api/v1 group, the path with its parameters filled in
// (plain, encoded, dotted, a static segment's name), with a trailing slash
// and with one segment more, in every method, must find the same handlers
// with the same parameters as with Hono's TrieRouter, which it replaced.
// A route added later with a parameter PatternRouter reads differently (a
// name with a hyphen, a regular expression) fails here.
import assert from "node:assert/strict";
import { Hono } from "hono";
import type { Router } from "hono/router";
import type { H, RouterRoute } from "hono/types";
import { TrieRouter } from "hono/router/trie-router";
import { createHarness } from "../_harness.ts";
import { API_GROUPS, PANEL_GROUPS } from "../../src/http/app.ts";
import { appRouter } from "../../src/http/pattern_router.ts";
import "../../src/http/openapi.ts"; // before the route modules, as app.ts loads them
import type { LazyGroup } from "../../src/http/lazy_routes.ts";
import type { Container } from "../../src/container.ts";

const VALUES = [
  "abc",
  "0192f0e4-7c1a-7000-8000-000000000001",
  "wamid.HBgL%2Fx%3D%3D",
  "%E2%82%AC",
  "a:b",
  "batch",
  "read",
];
const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];

type Handler = [H, RouterRoute];

/** The groups mounted at `base` in one app (as a lazy sub-app mounts them) on `router`. */
async function mounted(
  container: Container,
  base: string,
  groups: LazyGroup[],
  router: Router<Handler>,
): Promise<Hono> {
  const app = new Hono({ router });
  app.use("*", (_c, next) => next());
  for (const group of groups) {
    app.route(base, (await group.load())(container) as unknown as Hono);
  }
  return app;
}

/** The routes `app` matches, by their index in app.routes, with their parameters. */
function matched(app: Hono, method: string, path: string): unknown[] {
  const [handlers, stash] = (app.router as Router<Handler>).match(
    method,
    path,
  );
  return handlers.map(([[, route], params]) => {
    const values = Object.entries(params as Record<string, unknown>).map((
      [k, v],
    ) => [k, stash ? stash[v as number] : v]);
    return [app.routes.indexOf(route), Object.fromEntries(values)];
  });
}

Deno.test("every route of the API is matched by the route groups' router as by TrieRouter", async () => {
  await using h = await createHarness();
  let compared = 0;
  const active = new Set<string>();
  for (
    const [base, groups] of [
      ["/api/v2", API_GROUPS],
      ["/api/v1", PANEL_GROUPS],
    ] as const
  ) {
    const trie = await mounted(h.container, base, groups, new TrieRouter());
    const ours = await mounted(h.container, base, groups, appRouter());
    const paths = new Set<string>();
    for (const { path } of trie.routes) {
      for (const value of VALUES) {
        const filled = path.replace(/:\w+(\{[^}]*\})?\??/g, value)
          .replace(/\*$/, value);
        paths.add(filled).add(`${filled}/`).add(`${filled}/${value}`);
      }
    }
    for (const path of paths) {
      for (const method of METHODS) {
        assert.deepEqual(
          matched(ours, method, path),
          matched(trie, method, path),
          `${method} ${path}`,
        );
        compared++;
      }
    }
    active.add(
      (ours.router as unknown as { activeRouter: { name: string } })
        .activeRouter.name,
    );
  }
  // RegExpRouter refuses the API's routes: the pattern router answered.
  assert.ok(active.has("StrictPatternRouter"), [...active].join(", "));
  // The routes are there: hundreds of paths, not a vacuous loop.
  assert.ok(compared > 1000, `${compared} compared`);
});

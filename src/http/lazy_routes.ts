/**
 * Route groups imported on their first request. Building a group's zod and
 * OpenAPI schemas at start cost about a third of the server's start CPU, for
 * routes a process may never serve. Each group registers its path prefixes
 * (`/contacts/*`) on the router with one small handler; the first request
 * under a prefix imports the modules, builds the groups sharing that prefix
 * into a sub-app once, and every request under it is answered by that sub-app
 * with the variables the router's middleware set before (request id, log).
 */
import { type Context, Hono } from "hono";
import { routePath } from "hono/route";
import type { Container } from "../container.ts";
import type { AppEnv } from "./env.ts";
import { appRouter } from "./pattern_router.ts";

/** A route group module's factory, as `contactRoutes` is. */
export type RouteGroup = (container: Container) => Hono<AppEnv>;

export interface LazyGroup {
  /** The first path segment of each of the group's routes: `/contacts`. */
  prefixes: string[];
  load(): Promise<RouteGroup>;
}

interface SubApp {
  onError(err: Error, c: Context<AppEnv>): Response | Promise<Response>;
  notFound(c: Context<AppEnv>): Response | Promise<Response>;
  /**
   * Adds the middleware the router would have run before the routes (and the
   * response headers its own middleware set): a prefix's handler answers
   * without calling the router's later middleware, so the sub-app's response
   * is the whole response.
   */
  setup(sub: Hono<AppEnv>): void;
}

// The router's context rides on the request a sub-app answers, and the
// pattern the sub-app matched on that context, as properties, not WeakMap
// entries: an entry made per request (whose value, the context, holds its
// key, the request) kept every request's objects through young-generation
// collections until a full one, so they were all promoted to the old
// generation: 3.4 MB per scavenge under 32 concurrent sends, 1.2 MB without
// (a send-only profiler, since removed, with --v8-flags=--trace-gc: commit 8cb6732).
const OUTER = Symbol("outerContext");
const PATTERN = Symbol("matchedPattern");

interface AnsweredRequest extends Request {
  [OUTER]?: Context<AppEnv>;
}
interface MatchedContext extends Context<AppEnv> {
  [PATTERN]?: string;
}

/** The pattern the sub-app matched for this request (`/api/v2/contacts/:id`), if one answered it. */
export function lazyRoutePath(c: Context<AppEnv>): string | undefined {
  return (c as MatchedContext)[PATTERN];
}

/**
 * The group instances, each built once on first use (so the OpenAPI document
 * and the sub-apps share them).
 */
export class LazyGroups {
  readonly #container: Container;
  readonly #groups: LazyGroup[];
  readonly #before: () => Promise<unknown>;
  readonly #name: string;
  readonly #built = new Map<LazyGroup, Promise<Hono<AppEnv>>>();

  /**
   * `before` runs ahead of every load (a module the groups' modules need
   * evaluated first); `name` (their base path) sets these groups' part
   * names apart from another instance's (program_parts.ts).
   */
  constructor(
    container: Container,
    groups: LazyGroup[],
    before: () => Promise<unknown>,
    name: string,
  ) {
    this.#container = container;
    this.#groups = groups;
    this.#before = before;
    this.#name = name;
  }

  /** Every group, built, in the order given. */
  all(): Promise<Hono<AppEnv>[]> {
    return Promise.all(this.#groups.map((g) => this.#build(g)));
  }

  /**
   * Registers each prefix on `router` (mounted at `basePath`). Groups that
   * share a prefix are answered by one sub-app holding them in the order
   * given, so a path sees the same routes, in the same order, as when every
   * group was mounted on the router itself.
   */
  mount(router: Hono<AppEnv>, basePath: string, options: SubApp): void {
    for (const section of sections(this.#groups)) {
      let sub: Promise<Hono<AppEnv>> | undefined;
      let built: Hono<AppEnv> | undefined;
      const answer = async (c: Context<AppEnv>) => {
        if (!built) {
          sub ??= this.#subApp(section, basePath, options).catch((err) => {
            sub = undefined;
            throw err;
          });
          built = await sub;
        }
        (c.req.raw as AnsweredRequest)[OUTER] = c;
        return await built.fetch(c.req.raw, c.env);
      };
      // `/contacts/*` matches `/contacts` too.
      for (const prefix of new Set(section.flatMap((g) => g.prefixes))) {
        router.all(`${prefix}/*`, answer);
      }
    }
  }

  #build(group: LazyGroup): Promise<Hono<AppEnv>> {
    let built = this.#built.get(group);
    if (!built) {
      // Only the import is the part: a factory that throws is a bug (500).
      built = this.#container.parts.load(
        `routes ${this.#name} ${group.prefixes.join(" ")}`,
        async () => {
          await this.#before();
          return await group.load();
        },
      ).then((factory) => factory(this.#container));
      built.catch(() => this.#built.delete(group));
      this.#built.set(group, built);
    }
    return built;
  }

  async #subApp(
    section: LazyGroup[],
    basePath: string,
    options: SubApp,
  ): Promise<Hono<AppEnv>> {
    const groups = await Promise.all(section.map((g) => this.#build(g)));
    const sub = new Hono<AppEnv>({ router: appRouter() });
    sub.use("*", async (c, next) => {
      const outer = (c.req.raw as AnsweredRequest)[OUTER]!;
      // What the router's middleware set before this handler (the principal
      // comes from the sub-app's own guard).
      c.set("requestId", outer.get("requestId"));
      c.set("log", outer.get("log"));
      c.set("client", outer.get("client"));
      await next();
      (outer as MatchedContext)[PATTERN] = routePath(c, -1);
    });
    options.setup(sub);
    sub.onError(options.onError);
    sub.notFound(options.notFound);
    for (const group of groups) sub.route(basePath || "/", group);
    return sub;
  }
}

/** Groups joined when they share a prefix, in the order of their first group. */
function sections(groups: LazyGroup[]): LazyGroup[][] {
  const out: LazyGroup[][] = [];
  for (const group of groups) {
    const joined = out.filter((s) =>
      s.some((g) => g.prefixes.some((p) => group.prefixes.includes(p)))
    );
    const merged = [...joined.flat(), group];
    for (const s of joined) out.splice(out.indexOf(s), 1);
    out.push(merged);
  }
  // Each section keeps its groups in the order given.
  return out.map((s) => groups.filter((g) => s.includes(g)));
}

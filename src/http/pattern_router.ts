import type { Result, Router } from "hono/router";
import { PatternRouter } from "hono/router/pattern-router";
import { RegExpRouter } from "hono/router/reg-exp-router";
import { SmartRouter } from "hono/router/smart-router";
import { TrieRouter } from "hono/router/trie-router";

/**
 * Hono's PatternRouter (one regular expression per route, tried in order),
 * but with Hono's strict trailing slash: PatternRouter lets `/contacts/`
 * match `/contacts`, which the other routers answer 404, so a path ending
 * in `/` goes to a TrieRouter holding the same routes.
 *
 * WHY. RegExpRouter cannot hold a static path beside a parameter in the
 * same place for one method (`POST /messages/batch` and
 * `POST /messages/{waMessageId}/read`), so SmartRouter fell back to the
 * TrieRouter for most route groups. Its search writes each request's
 * parameters into the route tree itself: old objects pointing at new ones,
 * which kept about 1.5 KB per request alive through a scavenge (measured
 * with V8's sampling heap profiler under the send load).
 */
class StrictPatternRouter<T> implements Router<T> {
  readonly name = "StrictPatternRouter";
  readonly #routes = new PatternRouter<T>();
  readonly #slashed = new TrieRouter<T>();

  add(method: string, path: string, handler: T): void {
    this.#routes.add(method, path, handler);
    this.#slashed.add(method, path, handler);
  }

  match(method: string, path: string): Result<T> {
    return path.length > 1 && path.endsWith("/")
      ? this.#slashed.match(method, path)
      : this.#routes.match(method, path);
  }
}

/** The router of an app: RegExpRouter where it can, else StrictPatternRouter. */
export function appRouter<T>(): Router<T> {
  return new SmartRouter<T>({
    routers: [new RegExpRouter<T>(), new StrictPatternRouter<T>()],
  });
}

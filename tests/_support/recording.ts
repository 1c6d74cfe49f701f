import type { CompiledQuery } from "kysely";
import type { Executor } from "../../src/db/schema.ts";

/** `db` with the SQL of each executeQuery() call pushed to `seen` (precompiled statements go through it). */
export function recording<T extends Executor>(db: T, seen: string[]): T {
  return new Proxy(db, {
    get(target, key) {
      if (key === "executeQuery") {
        return (q: CompiledQuery) => {
          seen.push(q.sql);
          return target.executeQuery(q);
        };
      }
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** `db` that also keeps every query it runs, parameters included. */
export function recordingQueries(
  db: Executor,
): { db: Executor; queries: CompiledQuery[] } {
  const queries: CompiledQuery[] = [];
  const wrapped = new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== "executeQuery") return Reflect.get(target, prop, receiver);
      return (query: CompiledQuery) => {
        queries.push(query);
        return target.executeQuery(query);
      };
    },
  });
  return { db: wrapped, queries };
}

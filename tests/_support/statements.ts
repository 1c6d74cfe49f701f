// Counting the statements a piece of work runs, and a group commit whose
// gathering window the test closes (so the units it wants together are).
import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";
import type { Db } from "../../src/db/schema.ts";
import assert from "node:assert/strict";
import { StatementSync } from "node:sqlite";
import { GroupCommit } from "../../src/db/group_commit.ts";
import { turns } from "./group_commit.ts";

/** Counts every statement executed through the Kysely it is added to. */
export class StatementCounter implements KyselyPlugin {
  count = 0;
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    return args.node;
  }
  transformResult(
    args: PluginTransformResultArgs,
  ): Promise<QueryResult<UnknownRow>> {
    this.count++;
    return Promise.resolve(args.result);
  }
}

/**
 * Runs the units `start` sends to a group commit over `db` whose gathering
 * window stays open until all of them reached it, so they are one unit of
 * one transaction (asserted); returns the statements they cost.
 */
export async function statementsOfGathered(
  db: Db,
  start: (commits: GroupCommit) => Promise<unknown>[],
): Promise<number> {
  const counter = new StatementCounter();
  const windows: (() => void)[] = [];
  const commits = new GroupCommit(db.withPlugin(counter), {
    defer: (fn) => windows.push(fn),
  });
  const pending = start(commits);
  await turns(20);
  assert.equal(windows.length, 1, "one gathering window for all of them");
  windows[0]!();
  await Promise.all(pending);
  assert.deepEqual(commits.stats, { groups: 1, units: 1, largest: 1 });
  return counter.count;
}

type Method = "all" | "run" | "get" | "iterate";
const METHODS: Method[] = ["all", "run", "get", "iterate"];

/**
 * Routes every statement embedded SQLite executes (node:sqlite's
 * StatementSync methods) through `around`, which must call `run` and
 * return its result; returns the function that puts the methods back.
 */
export function aroundStatements(
  around: (statement: StatementSync, run: () => unknown) => unknown,
): () => void {
  // deno-lint-ignore no-explicit-any
  const proto = StatementSync.prototype as any;
  const originals = METHODS.map((m) => proto[m]);
  METHODS.forEach((m, i) => {
    proto[m] = function (this: StatementSync, ...args: unknown[]) {
      return around(this, () => originals[i].apply(this, args));
    };
  });
  return () => METHODS.forEach((m, i) => proto[m] = originals[i]);
}

/**
 * Runs `fn`, returning the SQL text of every statement embedded SQLite
 * executed meanwhile: counted where SQLite runs them (node:sqlite's
 * StatementSync), not where they are built.
 */
export async function sqliteStatementsOf(
  fn: () => Promise<void>,
): Promise<string[]> {
  const seen: string[] = [];
  const restore = aroundStatements((statement, run) => {
    seen.push(statement.sourceSQL);
    return run();
  });
  try {
    await fn();
  } finally {
    restore();
  }
  return seen;
}

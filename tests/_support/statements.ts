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
import { GroupCommit } from "../../src/db/group_commit.ts";

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
 * A group commit over `db` that counts its statements, and whose gathering
 * windows (RunOptions.gatherMs) stay open until the test calls `close()`.
 */
export function countedCommits(db: Db) {
  const counter = new StatementCounter();
  const windows: (() => void)[] = [];
  const commits = new GroupCommit(db.withPlugin(counter), {
    defer: (fn) => windows.push(fn),
  });
  return {
    commits,
    counter,
    /** Gathering windows opened so far. */
    windows: () => windows.length,
    /** Closes the open windows: what gathered runs. */
    close: () => windows.splice(0).forEach((fn) => fn()),
  };
}

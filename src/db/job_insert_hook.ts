import type {
  KyselyPlugin,
  PluginTransformQueryArgs,
  PluginTransformResultArgs,
  QueryResult,
  RootOperationNode,
  UnknownRow,
} from "kysely";

type QueryId = PluginTransformQueryArgs["queryId"];

/**
 * Calls `onInsert` after every `insert into jobs` statement, wherever it runs
 * (a request, a job handler, the fan-out of an event), so the worker pools
 * wake at once instead of at their next poll. On embedded SQLite the pool's
 * claim then queues behind the open transaction and runs right after its
 * commit; on libSQL a claim that comes too early finds nothing and the poll
 * picks the job up.
 */
export class JobInsertHook implements KyselyPlugin {
  #inserts = new WeakSet<QueryId>();
  #onInsert: () => void;

  constructor(onInsert: () => void) {
    this.#onInsert = onInsert;
  }

  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    const node = args.node;
    if (
      node.kind === "InsertQueryNode" &&
      node.into?.table.identifier.name === "jobs"
    ) {
      this.#inserts.add(args.queryId);
    }
    return node;
  }

  transformResult(
    args: PluginTransformResultArgs,
  ): Promise<QueryResult<UnknownRow>> {
    if (this.#inserts.has(args.queryId)) {
      this.#inserts.delete(args.queryId);
      this.#onInsert();
    }
    return Promise.resolve(args.result);
  }
}
